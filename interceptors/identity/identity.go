package identity

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/portico-gateway/portico/internal/callmeta"
)

// Minter mints assertions with a key ring's signing key. Safe for
// concurrent use; SetKeys swaps the ring while calls run.
type Minter struct {
	keys atomic.Pointer[Keys]
	s    *settings
}

// NewMinter validates opts and returns a Minter signing with keys.
func NewMinter(keys *Keys, opts ...Option) (*Minter, error) {
	if keys == nil {
		return nil, errors.New("identity: NewMinter needs keys")
	}
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	m := &Minter{s: s}
	m.keys.Store(keys)
	return m, nil
}

// SetKeys replaces the ring (rotation): later assertions are signed with
// its first key.
func (m *Minter) SetKeys(keys *Keys) {
	if m != nil && keys != nil {
		m.keys.Store(keys)
	}
}

// Mint signs an assertion that p calls audience (a gRPC service name) for
// customer forSubject ("" for none), living the Minter's TTL from now.
func (m *Minter) Mint(audience string, p callmeta.Principal, forSubject string) (string, error) {
	now := m.s.now()
	return mint(m.keys.Load(), Claims{
		Audience: audience, Subject: p.Subject, Role: p.Role, For: forSubject,
		IssuedAt: now, Expires: now.Add(m.s.ttl),
	})
}

// Verifier checks assertions for one audience. Safe for concurrent use;
// SetKeys swaps the ring while calls run.
type Verifier struct {
	keys  atomic.Pointer[Keys]
	now   func() time.Time
	rules verifyRules
}

// NewVerifier validates opts and returns a Verifier that accepts
// assertions for audience (the service's fully qualified gRPC name) signed
// by any key of keys whose window is open.
func NewVerifier(keys *Keys, audience string, opts ...Option) (*Verifier, error) {
	if keys == nil {
		return nil, errors.New("identity: NewVerifier needs keys")
	}
	if !validAudience(audience) {
		return nil, errors.New("identity: audience must be a gRPC service name")
	}
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	v := &Verifier{now: s.now, rules: verifyRules{audience: audience, leeway: s.leeway, maxTTL: s.maxTTL}}
	v.keys.Store(keys)
	return v, nil
}

// SetKeys replaces the ring (rotation).
func (v *Verifier) SetKeys(keys *Keys) {
	if v != nil && keys != nil {
		v.keys.Store(keys)
	}
}

// Audience returns the audience the verifier accepts.
func (v *Verifier) Audience() string { return v.rules.audience }

// Verify checks an assertion and returns its claims; the error is one of
// this package's Err values.
func (v *Verifier) Verify(token string) (Claims, error) {
	return verify(v.keys.Load(), token, v.now(), v.rules)
}

type claimsKey struct{}

// NewContext returns ctx carrying verified claims (the server interceptor
// does this).
func NewContext(ctx context.Context, c Claims) context.Context {
	return context.WithValue(ctx, claimsKey{}, c)
}

// FromContext returns the verified claims of the call ctx serves.
func FromContext(ctx context.Context) (Claims, bool) {
	c, ok := ctx.Value(claimsKey{}).(Claims)
	return c, ok
}
