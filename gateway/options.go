package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/gateway/answered"
	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// DialFunc connects to one upstream. The edge's own is
// (*Upstreams).Dialer, which builds the client resilience chain with
// NewUpstream. A DialFunc must keep DialOptions on the connection, or every
// failure looks unanswered (502), and must propagate trace ids (the chain's
// first layer does). The connection is closed by Server.Close. /health
// never uses it: it checks each upstream over a second connection made by
// Dial, so health traffic stays out of the chain (its breakers, retries).
type DialFunc func(ctx context.Context, up config.UpstreamConfig) (*grpc.ClientConn, error)

// Authenticator identifies the caller of a request; the edge's own is an
// auth.Chain built from Config.Auth. Errors wrap one of package auth's
// sentinel errors, which choose the problem (authProblem); others are 401
// UNAUTHENTICATED. An authenticator may read the body if it puts it back.
type Authenticator interface {
	Authenticate(r *http.Request) (auth.Principal, error)
}

// Option configures New.
type Option func(*options)

type options struct {
	dial          DialFunc
	logger        *slog.Logger
	registry      *prometheus.Registry
	authenticator Authenticator
	nonces        auth.NonceStore
	openAPI       []byte
	telemetry     *telemetry.Provider
	upstreams     *Upstreams
	configPath    string
	registrations []registration   // tests only
	limitClock    func() time.Time // tests only: the local rate limiter's clock
	nonceClock    func() time.Time // tests only: when nonce stores move (nonces)
	consoleClock  func() time.Time // tests only: the console sessions' clock
	redisProbed   func(up bool)    // tests only: after each PING of a Redis probe
	healthMaxAge  time.Duration    // tests only: /health's report reuse (0: health.DefaultMaxAge)
}

// WithDialer replaces the default dialer (Dial with no extra options: the
// chain's transport without its resilience layers); the edge process
// passes (*Upstreams).Dialer.
func WithDialer(d DialFunc) Option { return func(o *options) { o.dial = d } }

// WithUpstreams makes ups the edge's dialer (ups.Dialer) and lets the edge
// release each chain when the last config using it drains, and show its
// state on the admin API. The edge process uses it.
func WithUpstreams(ups *Upstreams) Option {
	return func(o *options) { o.dial, o.upstreams = ups.Dialer(), ups }
}

// WithConfigFile names the file the config came from: Reload's admin call
// re-reads it. Without it the admin API can only roll back.
func WithConfigFile(path string) Option { return func(o *options) { o.configPath = path } }

// WithLogger sets the logger for access lines and lifecycle events; the
// default writes JSON to stderr (logging.New) with service "gateway".
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithRegistry sets the registry the edge registers its metrics with and
// serves at /metrics; the default is a new registry with the Go and process
// collectors.
func WithRegistry(r *prometheus.Registry) Option { return func(o *options) { o.registry = r } }

// WithAuthenticator replaces the credentials of Config.Auth (the policy
// still applies).
func WithAuthenticator(a Authenticator) Option { return func(o *options) { o.authenticator = a } }

// WithTelemetry sets the tracer provider of the edge's spans (built from
// Config.Tracing by the process); the default records none.
func WithTelemetry(p *telemetry.Provider) Option { return func(o *options) { o.telemetry = p } }

// WithNonceStore sets where signed requests' nonces are remembered; the
// default is one auth.MemoryNonces per New, enough for a single edge.
// Edges sharing clients share a store (Redis), or a request replayed to
// another edge is accepted there.
func WithNonceStore(n auth.NonceStore) Option { return func(o *options) { o.nonces = n } }

// WithOpenAPI sets the OpenAPI document served as is at /openapi.json; the
// default is gen/openapi.JSON, finished by make generate.
func WithOpenAPI(doc []byte) Option { return func(o *options) { o.openAPI = doc } }

// DialOptions are what every upstream connection needs besides its
// interceptors: the answered stats handler, which tells an upstream that
// answered from one that never did (502 versus 503). It adds no
// interceptor: trace propagation is the client chain's first layer
// (interceptors.LayerTrace), and Dial adds it for a connection without
// the chain.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithStatsHandler(answered.StatsHandler())}
}

// Dial is the default dialer, without the client chain's resilience (for
// /health, server reflection and tests): interceptors.Dial with
// WithoutResilience, so the connection is built like the chain's (TLS with
// the upstream's tls section, trace propagation, reconnect backoff, the
// upstream's balancer over its addresses) and carries DialOptions, then
// extra, but its calls pass no breaker, retry or client health check. One
// address is dialled as the target, as is, so its host is the name TLS
// checks (unless tls.server_name says otherwise). It does not block or
// use ctx: connections are made lazily and re-made by grpc-go.
func Dial(_ context.Context, up config.UpstreamConfig, extra ...grpc.DialOption) (*grpc.ClientConn, error) {
	cfg := up.Chain()
	if len(cfg.Addresses) == 1 {
		cfg.Target, cfg.Addresses = cfg.Addresses[0], nil
	}
	opts, err := upstreamOptions(up, cfg, interceptors.WithoutResilience(), interceptors.WithDialOptions(extra...))
	if err != nil {
		return nil, err
	}
	cc, err := interceptors.Dial("", opts...)
	if err != nil {
		return nil, fmt.Errorf("upstream %s: %w", up.Name, err)
	}
	return cc, nil
}

func defaultDial(ctx context.Context, up config.UpstreamConfig) (*grpc.ClientConn, error) {
	return Dial(ctx, up)
}
