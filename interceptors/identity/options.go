package identity

import (
	"errors"
	"time"
)

// Defaults.
const (
	// DefaultTTL is how long a minted assertion lives. Assertions are
	// minted per call, so this only needs to cover one call with its
	// retries (the edge's longest deadline is 30s).
	DefaultTTL = time.Minute
	// DefaultLeeway is the clock skew a verifier tolerates.
	DefaultLeeway = 5 * time.Second
	// DefaultMaxTTL is the longest life a verifier accepts.
	DefaultMaxTTL = 5 * time.Minute
)

// Option configures NewMinter and NewVerifier.
type Option func(*settings)

type settings struct {
	ttl, leeway, maxTTL time.Duration
	now                 func() time.Time
	service             string
	errs                []error
}

func newSettings(opts []Option) (*settings, error) {
	s := &settings{ttl: DefaultTTL, leeway: DefaultLeeway, maxTTL: DefaultMaxTTL, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	if s.ttl > s.maxTTL {
		s.errs = append(s.errs, errors.New("identity: TTL exceeds the verifiers' maximum"))
	}
	return s, errors.Join(s.errs...)
}

// WithTTL sets the life of minted assertions (NewMinter). Zero means
// DefaultTTL; it must be positive and at most DefaultMaxTTL.
func WithTTL(d time.Duration) Option {
	return func(s *settings) {
		if d < 0 {
			s.errs = append(s.errs, errors.New("identity: negative TTL"))
		} else if d > 0 {
			s.ttl = d
		}
	}
}

// WithLeeway sets the clock skew a verifier tolerates on both ends of an
// assertion's life. Zero means DefaultLeeway; negative is an error.
func WithLeeway(d time.Duration) Option {
	return func(s *settings) {
		if d < 0 {
			s.errs = append(s.errs, errors.New("identity: negative leeway"))
		} else if d > 0 {
			s.leeway = d
		}
	}
}

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option {
	return func(s *settings) {
		if now != nil {
			s.now = now
		}
	}
}

// WithService makes a Minter call as the service named: subject name, role
// callmeta.RoleService, and For the verified caller of the incoming call
// the outgoing one serves (FromContext), if any. Without it a Minter signs
// the principal the caller states in its outgoing metadata
// (callmeta.WithPrincipal), the edge's way.
func WithService(name string) Option {
	return func(s *settings) {
		if !validField(name, false) {
			s.errs = append(s.errs, errors.New("identity: service name must be 1-255 printable characters"))
		}
		s.service = name
	}
}
