package identity

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/portico-gateway/portico/internal/callmeta"
)

// Assertion format and bounds.
const (
	// version prefixes every assertion.
	version = "v1"
	// MaxAssertionLen bounds an assertion a verifier reads, in bytes.
	MaxAssertionLen = 2048
	// MaxFieldLen bounds the subject, role and on-behalf-of subject (as
	// callmeta bounds a metadata value).
	MaxFieldLen = 255
	// maxAudienceLen bounds an audience (a gRPC service name).
	maxAudienceLen = 200
)

// Errors a verifier returns; the server interceptor turns each into
// UNAUTHENTICATED.
var (
	ErrMissing    = errors.New("identity: no assertion")
	ErrMalformed  = errors.New("identity: malformed assertion")
	ErrUnknownKey = errors.New("identity: assertion signed with an unknown key")
	ErrKeyRetired = errors.New("identity: assertion signed with a retired key")
	ErrSignature  = errors.New("identity: bad assertion signature")
	ErrAudience   = errors.New("identity: assertion is for another audience")
	ErrExpired    = errors.New("identity: assertion expired")
	ErrNotYet     = errors.New("identity: assertion issued in the future")
	ErrLifetime   = errors.New("identity: assertion lives longer than allowed")
)

// Claims is what an assertion states.
type Claims struct {
	// Audience is the fully qualified gRPC service the assertion is for,
	// e.g. "portico.inventory.v1.InventoryService".
	Audience string
	// Subject and Role are the caller: a customer, reader or admin from the
	// edge, or a service calling as itself (Role callmeta.RoleService).
	Subject, Role string
	// For is the customer a service calls on behalf of, for the record;
	// "" when it acts for nobody (a background reconciler).
	For string
	// IssuedAt and Expires bound the assertion's life, in whole seconds.
	IssuedAt, Expires time.Time
}

// Principal returns the caller the claims name.
func (c Claims) Principal() callmeta.Principal {
	return callmeta.Principal{Subject: c.Subject, Role: c.Role}
}

// mint signs c with the ring's signing key:
//
//	v1.<key id>.<base64url(payload)>.<base64url(HMAC-SHA256(K_aud, "v1.<key id>.<payload>"))>
//
// where payload is audience, subject, role, for, issued-at and expiry
// (Unix seconds), joined by newlines (no field holds one).
func mint(keys *Keys, c Claims) (string, error) {
	if !validField(c.Subject, false) || !validField(c.Role, false) || !validField(c.For, true) ||
		!validAudience(c.Audience) {
		return "", errors.New("identity: claims need a printable subject and role (1-255 characters) and a service name as audience")
	}
	k := keys.signer()
	var pb [4*MaxFieldLen + maxAudienceLen + 48]byte
	p := append(pb[:0], c.Audience...)
	p = append(append(p, '\n'), c.Subject...)
	p = append(append(p, '\n'), c.Role...)
	p = append(append(p, '\n'), c.For...)
	p = strconv.AppendInt(append(p, '\n'), c.IssuedAt.Unix(), 10)
	p = strconv.AppendInt(append(p, '\n'), c.Expires.Unix(), 10)
	out := make([]byte, 0, len(version)+len(k.ID)+base64.RawURLEncoding.EncodedLen(len(p))+46)
	out = append(out, version+"."...)
	out = append(append(out, k.ID...), '.')
	out = base64.RawURLEncoding.AppendEncode(out, p)
	var sb [sha256.Size]byte
	sig := k.mac(c.Audience).sum(sb[:0], string(out))
	out = base64.RawURLEncoding.AppendEncode(append(out, '.'), sig)
	return string(out), nil
}

// verifyRules are the checks besides the signature.
type verifyRules struct {
	audience string
	leeway   time.Duration
	maxTTL   time.Duration
}

// verify parses and checks token for audience at now: structure, key,
// signature (constant time), then payload and times. It reads at most
// MaxAssertionLen bytes and never panics (FuzzVerify).
func verify(keys *Keys, token string, now time.Time, r verifyRules) (Claims, error) {
	if token == "" {
		return Claims{}, ErrMissing
	}
	if len(token) > MaxAssertionLen {
		return Claims{}, ErrMalformed
	}
	rest, ok := strings.CutPrefix(token, version+".")
	if !ok {
		return Claims{}, ErrMalformed
	}
	kid, rest, ok1 := strings.Cut(rest, ".")
	payload, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(sig, ".") || !validKeyID(kid) {
		return Claims{}, ErrMalformed
	}
	var sb [sha256.Size + 3]byte // +3: a longer signature must fail to fit, not pass
	got, err := base64.RawURLEncoding.AppendDecode(sb[:0], []byte(sig))
	if err != nil || len(got) != sha256.Size {
		return Claims{}, ErrMalformed
	}
	k, err := keys.verifier(kid, now)
	if err != nil {
		return Claims{}, err
	}
	var wb [sha256.Size]byte
	want := k.mac(r.audience).sum(wb[:0], token[:len(token)-len(sig)-1])
	c, perr := parsePayload(payload)
	if !hmac.Equal(got, want) {
		if perr == nil && c.Audience != r.audience {
			return Claims{}, ErrAudience // say why, though the signature alone refused it
		}
		return Claims{}, ErrSignature
	}
	if perr != nil {
		return Claims{}, perr
	}
	if c.Audience != r.audience {
		return Claims{}, ErrAudience
	}
	return c, checkTimes(c, now, r)
}

func checkTimes(c Claims, now time.Time, r verifyRules) error {
	switch {
	case !now.Before(c.Expires.Add(r.leeway)):
		return ErrExpired
	case now.Add(r.leeway).Before(c.IssuedAt):
		return ErrNotYet
	case c.Expires.Sub(c.IssuedAt) > r.maxTTL || c.Expires.Before(c.IssuedAt):
		return ErrLifetime
	}
	return nil
}

// parsePayload decodes and splits a payload; every field is checked as
// mint checks it.
func parsePayload(payload string) (Claims, error) {
	var pb [MaxAssertionLen]byte
	p, err := base64.RawURLEncoding.AppendDecode(pb[:0], []byte(payload))
	if err != nil {
		return Claims{}, ErrMalformed
	}
	f := strings.Split(string(p), "\n")
	if len(f) != 6 {
		return Claims{}, ErrMalformed
	}
	iat, err1 := strconv.ParseInt(f[4], 10, 64)
	exp, err2 := strconv.ParseInt(f[5], 10, 64)
	c := Claims{Audience: f[0], Subject: f[1], Role: f[2], For: f[3], IssuedAt: time.Unix(iat, 0), Expires: time.Unix(exp, 0)}
	if err1 != nil || err2 != nil || iat < 0 || exp < 0 || !validAudience(c.Audience) ||
		!validField(c.Subject, false) || !validField(c.Role, false) || !validField(c.For, true) {
		return Claims{}, ErrMalformed
	}
	return c, nil
}

// validField reports whether s is 1-MaxFieldLen printable ASCII characters
// with no space at either end (or empty, when optional): what gRPC
// metadata carries unchanged and callmeta reads back as the same name.
func validField(s string, optional bool) bool {
	return (optional && s == "") || callmeta.ValidName(s, MaxFieldLen)
}

// validAudience reports whether s looks like a gRPC service name.
func validAudience(s string) bool {
	if s == "" || len(s) > maxAudienceLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
