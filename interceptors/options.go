package interceptors

import (
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/interceptors/balance"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/bulkhead"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/interceptors/retry"
)

// Metrics receives what every layer of the chain reports: retries and
// budget exhaustion, breaker transitions, bulkhead rejections and in-flight
// calls, ejections. metrics.Prometheus implements it.
type Metrics interface {
	retry.Observer
	breaker.Observer
	bulkhead.Observer
	balance.Observer
}

// Option configures Dial, NewUpstream and Layers. Options apply in order
// over a Config (see WithConfig). An option that sets a Config field gives
// its values the field's meaning, zero rule included (see Config), and is
// validated with the rest of the Config: a value that makes no sense makes
// the constructor fail with a *FieldError naming the field.
type Option func(*settings)

type settings struct {
	cfg      Config
	cfgSet   string            // the first option that set a Config field, for WithConfig
	breaker  *breaker.Settings // WithBreaker: replaces cfg.Breaker
	metrics  Metrics
	logger   *slog.Logger
	dialOpts []grpc.DialOption
	lookup   balance.LookupFunc // WithLookup; nil means net.DefaultResolver
	identity *identity.Minter   // WithIdentity; nil adds no identity layer
	bare     bool               // WithoutResilience
	errs     []error
}

func (s *settings) fail(field, format string, args ...any) {
	s.errs = append(s.errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
}

// WithLookup replaces the DNS lookup of dns:/// targets (net.DefaultResolver
// by default), for tests.
func WithLookup(f balance.LookupFunc) Option { return func(s *settings) { s.lookup = f } }

// WithConfig applies a whole Config. It replaces every Config field, so it
// comes before the options that set single fields (WithUpstream,
// WithTimeout, ...), which then override it; given after one of them it
// makes the constructor fail rather than drop that option silently.
// Options that are not Config fields (WithMetrics, WithLogger,
// WithDialOptions, WithLookup, WithBreaker) keep their place anywhere.
func WithConfig(cfg Config) Option {
	return func(s *settings) {
		if s.cfgSet != "" {
			s.fail("config", "WithConfig must come before %s, which it would override", s.cfgSet)
			return
		}
		s.cfg = cfg
	}
}

// field returns an option that sets one Config field with set, recording
// that a field was set (see WithConfig).
func field(name string, set func(*settings)) Option {
	return func(s *settings) {
		if s.cfgSet == "" {
			s.cfgSet = name
		}
		set(s)
	}
}

// WithUpstream names the upstream (Config.Name).
func WithUpstream(name string) Option {
	return field("WithUpstream", func(s *settings) { s.cfg.Name = name })
}

// WithTimeout sets Config.Timeout, the upstream's timeout: zero is the
// default, NoTimeout none of its own.
func WithTimeout(d time.Duration) Option {
	return field("WithTimeout", func(s *settings) { s.cfg.Timeout = d })
}

// WithMethodTimeout sets one method's timeout (Config.MethodTimeouts).
func WithMethodTimeout(method string, d time.Duration) Option {
	return field("WithMethodTimeout", func(s *settings) {
		if s.cfg.MethodTimeouts == nil {
			s.cfg.MethodTimeouts = map[string]time.Duration{}
		}
		s.cfg.MethodTimeouts[method] = d
	})
}

// WithMinBudget sets the least time a call needs to be started
// (Config.MinBudget).
func WithMinBudget(d time.Duration) Option {
	return field("WithMinBudget", func(s *settings) { s.cfg.MinBudget = d })
}

// WithMaxAttempts sets Config.Retry.MaxAttempts: attempts per call in
// total, the first included.
func WithMaxAttempts(n int) Option {
	return field("WithMaxAttempts", func(s *settings) { s.cfg.Retry.MaxAttempts = n })
}

// WithAttemptTimeout sets Config.Retry.AttemptTimeout, the bound of each
// attempt.
func WithAttemptTimeout(d time.Duration) Option {
	return field("WithAttemptTimeout", func(s *settings) { s.cfg.Retry.AttemptTimeout = d })
}

// WithRetryBudget sets the retry budget (Config.Retry BudgetRatio,
// BudgetWindow and BudgetMinPerSecond): at most ratio of the calls over
// window may be retries, plus minPerSecond per second of window.
func WithRetryBudget(ratio float64, window time.Duration, minPerSecond float64) Option {
	return field("WithRetryBudget", func(s *settings) {
		s.cfg.Retry.BudgetRatio, s.cfg.Retry.BudgetWindow = ratio, window
		s.cfg.Retry.BudgetMinPerSecond = minPerSecond
	})
}

// WithBreaker sets the breaker's settings, replacing Config.Breaker (hooks
// included). Name is set by the chain.
func WithBreaker(bs breaker.Settings) Option {
	return func(s *settings) {
		if err := bs.Validate(); err != nil {
			s.fail("breaker", "%v", err)
		}
		s.breaker = &bs
	}
}

// WithBulkhead sets Config.Bulkhead: at most maxInFlight calls in
// flight, with up to queue calls waiting at most wait for a slot.
func WithBulkhead(maxInFlight, queue int, wait time.Duration) Option {
	return field("WithBulkhead", func(s *settings) {
		s.cfg.Bulkhead = BulkheadConfig{MaxInFlight: maxInFlight, Queue: queue, MaxWait: wait}
	})
}

// WithBalancer sets the load balancing policy: "round_robin" or
// "least_request" (Config.Balancer).
func WithBalancer(name string) Option {
	return field("WithBalancer", func(s *settings) { s.cfg.Balancer = name })
}

// WithHealthCheck turns on client health checking of service ("" for the
// whole server).
func WithHealthCheck(service string) Option {
	return field("WithHealthCheck", func(s *settings) { s.cfg.HealthCheck = HealthCheckConfig{Enabled: new(true), Service: service} })
}

// WithAddresses serves the upstream from a static, changeable address list
// instead of a target (Config.Addresses).
func WithAddresses(addrs []string) Option {
	return field("WithAddresses", func(s *settings) { s.cfg.Addresses = append([]string(nil), addrs...) })
}

// WithMetrics sets where the chain reports. Default: nowhere.
func WithMetrics(m Metrics) Option {
	return func(s *settings) { s.metrics = m }
}

// WithLogger sets the logger for breaker transitions and ejections.
// Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) { s.logger = l }
}

// WithDialOptions adds grpc.DialOptions after the chain's own, e.g.
// transport credentials (the default is insecure: Portico's services talk
// plaintext inside the cluster) or a test dialer.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(s *settings) { s.dialOpts = append(s.dialOpts, opts...) }
}

// WithIdentity gives every call an identity assertion minted by m, which
// Portico's services require (package identity): the identity layer, right
// after trace, so it runs once per call and every retry carries it. A
// Minter made with identity.WithService(name) calls as that service on
// behalf of its own verified caller; a plain one signs the principal each
// call states with callmeta.WithPrincipal. Default: no identity layer.
//
//	keys, _ := identity.ParseKeys(os.Getenv("PORTICO_IDENTITY_KEYS"))
//	m, _ := identity.NewMinter(keys, identity.WithService("billing"))
//	cc, _ := interceptors.Dial("127.0.0.1:43102", interceptors.WithIdentity(m))
func WithIdentity(m *identity.Minter) Option {
	return func(s *settings) { s.identity = m }
}

// WithoutResilience builds the connection without the resilience layers:
// trace (and identity, WithIdentity) only; no deadline, bulkhead,
// breakers, retries or ejection, and no client health checking, whatever
// the Config says. The rest is the chain's: credentials, reconnect
// backoff, balancer and resolver. It is for traffic that must neither
// count against nor be refused by the upstream's breakers, and must reach
// an instance that reports NOT_SERVING: the edge's /health probes and its
// server reflection (gateway.Dial).
func WithoutResilience() Option { return func(s *settings) { s.bare = true } }
