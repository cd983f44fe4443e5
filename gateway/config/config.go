package config

import (
	"time"

	"github.com/portico-gateway/portico/gateway/health"
	"github.com/portico-gateway/portico/interceptors"
)

// Defaults for every optional Config field, each documented only here;
// see each field for what zero and negative values mean.
const (
	DefaultListen            = "127.0.0.1:43100"
	DefaultShutdownGrace     = 10 * time.Second
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultBodyTimeout       = 10 * time.Second
	DefaultMinBodyRate       = 1024 // bytes a second
	// MaxMinBodyRate bounds http.min_body_rate: 1 MiB a second is already
	// more than a slow mobile link keeps up.
	MaxMinBodyRate         = 1 << 20
	DefaultIdleTimeout     = 2 * time.Minute
	DefaultMaxHeaderBytes  = 64 << 10
	DefaultUpstreamTimeout = 5 * time.Second
	DefaultMaxTimeout      = 30 * time.Second
	DefaultMaxBodyBytes    = 1 << 20
	DefaultHealthTimeout   = health.DefaultTimeout
)

// Bounds of the edge's own durations, each documented on its fields: past
// them the edge is unusable, not tuned. Zero stays the default.
const (
	// MaxShutdownGrace bounds shutdown_grace and drain_delay: longer, a
	// SIGTERM leaves the edge running, holding its port, for as long.
	MaxShutdownGrace = time.Hour
	// MinHTTPTimeout and MaxHTTPTimeout bound the http section's
	// timeouts: shorter, no client gets a request in (1ns answers
	// nothing); longer, a slow client holds its connection for hours.
	MinHTTPTimeout = 100 * time.Millisecond
	MaxHTTPTimeout = time.Hour
)

// Config is the edge's one YAML document. The zero value of every optional
// field means its documented default, and Parse fills the defaults
// in; negative durations and sizes are errors. An upstream's resilience
// block follows interceptors.Config's rule, where a negative value turns
// off a feature that is on by default. New sections (rate limits,
// JWT) are added as new keys, so old documents stay valid.
type Config struct {
	// Listen is the TCP address the cmd layer listens on. Empty means
	// DefaultListen, on loopback only, so a laptop running the dev profile
	// never exposes the demo tokens. Use ":43100" for every interface.
	// A reload that changes it binds the new address first (a busy one
	// rejects the reload), serves there, and closes the old listener;
	// requests in flight on it finish.
	Listen string `yaml:"listen,omitempty"`
	// ShutdownGrace bounds how long in-flight requests may finish once
	// the listener closes (after DrainDelay); then connections are cut.
	// Zero means DefaultShutdownGrace or, when longer, the longest route
	// timeout plus a second, so a drain never cuts a request within its
	// deadline. At most MaxShutdownGrace (1h).
	ShutdownGrace time.Duration `yaml:"shutdown_grace,omitempty"`
	// DrainDelay is how long the edge keeps serving, with /healthz/ready
	// answering 503, before it stops accepting connections, so a load
	// balancer notices first (Kubernetes: the preStop delay). Zero means
	// the default, no delay. At most MaxShutdownGrace (1h).
	DrainDelay time.Duration `yaml:"drain_delay,omitempty"`
	// HTTP holds the HTTP server's own limits. A reload that changes them
	// applies them to new connections; a kept-alive connection from before
	// gets Connection: close on its next answer.
	HTTP HTTPConfig `yaml:"http,omitempty"`
	// Upstreams are the gRPC services behind the edge, each named as the
	// registration list (gateway/routes.go) names it: inventory, payment, order.
	// A config serves any subset of them; a compiled-in service without
	// its upstream is not served (its routes answer 404, and check-config
	// says so). Required: at least one.
	Upstreams []UpstreamConfig `yaml:"upstreams"`
	// Routes holds body and deadline limits, with per-route overrides.
	Routes RoutesConfig `yaml:"routes,omitempty"`
	// Auth configures who may call.
	Auth AuthConfig `yaml:"auth,omitempty"`
	// Health configures GET /health.
	Health HealthConfig `yaml:"health,omitempty"`
	// Redis, when set, is where edge instances share state.
	Redis RedisConfig `yaml:"redis,omitempty"`
	// Identity, when set, signs the principal for each upstream call.
	Identity IdentityConfig `yaml:"identity,omitempty"`
	// TLS, when set, terminates TLS at the edge (tls.go).
	TLS TLSConfig `yaml:"tls,omitempty"`
	// AdminListen is the admin API's TCP address (gateway/admin.go): /metrics and
	// /healthz/* open, everything else for the admin role. Empty means no
	// admin listener. Reloads like listen: set by a reload it starts,
	// changed it moves, emptied it stops.
	AdminListen string `yaml:"admin_listen,omitempty"`
	// Ops configures reloads, kept versions and readiness.
	Ops OpsConfig `yaml:"ops,omitempty"`
	// Limits are the edge's rate limits; absent means none.
	Limits LimitsConfig `yaml:"limits,omitempty"`
	// CORS answers browsers' cross-origin requests; absent means none.
	CORS CORSConfig `yaml:"cors,omitempty"`
	// Telemetry configures tracing and log sampling; zero exports nothing.
	Telemetry TelemetryConfig `yaml:"telemetry,omitempty"`
	// Shed caps the requests in flight (load shedding, shed.go).
	Shed ShedConfig `yaml:"shed,omitempty"`
	// Streams bounds server-streaming routes (NDJSON, Server-Sent Events).
	Streams StreamsConfig `yaml:"streams,omitempty"`
	// Problems configures the problem details' type URIs
	// (problems.go); absent keeps them relative ("/problems/...").
	Problems ProblemsConfig `yaml:"problems,omitempty"`
	// Stale bounds the copies kept for stale-if-error answers
	// (stale.go); absent means its defaults.
	Stale StaleConfig `yaml:"stale,omitempty"`

	// loaded holds the descriptors of the upstreams' run-time services
	// (gateway's services.go), read when the config is loaded or first
	// applied; a rollback brings back the descriptors of its version.
	loaded Loaded
}

// HTTPConfig holds the HTTP server's limits against slow or oversized
// clients.
type HTTPConfig struct {
	// ReadHeaderTimeout bounds reading a request's headers (slowloris).
	// Zero means DefaultReadHeaderTimeout; otherwise MinHTTPTimeout (100ms)
	// to MaxHTTPTimeout (1h).
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout,omitempty"`
	// ReadTimeout bounds reading a whole request, body included. Zero means
	// DefaultReadTimeout; otherwise 100ms to 1h, as ReadHeaderTimeout.
	ReadTimeout time.Duration `yaml:"read_timeout,omitempty"`
	// BodyTimeout bounds the arrival of an /api request's body, which the
	// edge reads whole before the request takes an in-flight slot
	// (ShedConfig) or is authenticated; never longer than ReadTimeout. A
	// body that does not arrive in time is 408 REQUEST_TIMEOUT and its
	// connection is closed. Zero means DefaultBodyTimeout; negative means
	// only ReadTimeout bounds it; otherwise 100ms to 1h, as
	// ReadHeaderTimeout.
	BodyTimeout time.Duration `yaml:"body_timeout,omitempty"`
	// MinBodyRate is the average rate, in bytes a second, an /api
	// request's body must keep up after its first second (BodyGrace):
	// the body's read deadline moves on one second for every MinBodyRate
	// bytes that arrive, up to BodyTimeout; slower is 408 REQUEST_TIMEOUT.
	// Zero means DefaultMinBodyRate; -1 means no minimum rate; at most
	// MaxMinBodyRate (a rate no client keeps up would refuse every body).
	MinBodyRate int64 `yaml:"min_body_rate,omitempty"`
	// IdleTimeout bounds a keep-alive connection's wait for its next
	// request. Zero means DefaultIdleTimeout; otherwise 100ms to 1h, as
	// ReadHeaderTimeout.
	IdleTimeout time.Duration `yaml:"idle_timeout,omitempty"`
	// MaxHeaderBytes bounds a request's request line and headers. Zero
	// means DefaultMaxHeaderBytes. Over it the answer is a 431 problem
	// up to 256 KiB beyond the limit (what net/http still reads), and
	// net/http's own plain-text 431 beyond that.
	// There is no write timeout: route deadlines bound the work, and a
	// write timeout would cut slow readers of large pages mid-body.
	MaxHeaderBytes int `yaml:"max_header_bytes,omitempty"`
	// MaxConnections caps the client connections the API listener holds
	// at once (the admin listener has none). At the cap the connection
	// idle longest (kept alive between requests) is closed to make room,
	// as nginx does; with none idle the edge stops accepting until one
	// closes, and new connections wait in the kernel's listen backlog.
	// Zero means the default, DefaultMaxConnections of the process's soft
	// open-file limit (RLIMIT_NOFILE): the limit less a reserve for
	// upstream connections, files and the admin listener, max(256,
	// limit/5), and at least 64; 4096 where the limit is unknown (not
	// Linux) or unlimited. It guards descriptors, not memory: an idle
	// connection costs about 25-30 KiB, so set it lower to bound that.
	// -1 means no cap (accept until the open-file limit); below -1 is an
	// error. A reload applies it at once: a raised cap resumes accepting,
	// a lowered one closes idle connections as new ones arrive.
	MaxConnections int `yaml:"max_connections,omitempty"`
}

// UpstreamConfig is one gRPC service behind the edge.
type UpstreamConfig struct {
	// Name identifies the upstream in gateway/routes.go, logs, metrics, /health and
	// the hop of a 504: 1-32 characters of [a-z0-9-], starting with a
	// letter. Required, unique.
	Name string `yaml:"name"`
	// Addresses are the upstream's instances: host:port with a port of
	// 1-65535 or a known service name ("127.0.0.1:43101", "[::1]:43101").
	// One entry may instead be dns:///name:port or another gRPC target
	// whose resolver gRPC has (unix:///path, unix:name.sock,
	// passthrough:///...); several entries must be
	// host:port and are balanced round robin. Anything that could never be
	// dialled is refused (interceptors.CheckAddresses). Required.
	Addresses []string `yaml:"addresses"`
	// Timeout is the deadline of every call to this upstream, all
	// attempts together, unless a route overrides it or the client asks
	// for less (Grpc-Timeout, capped by routes.max_timeout). It is the
	// only timeout the edge applies: its client chain has none of its
	// own. Zero means DefaultUpstreamTimeout.
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// HealthService is the grpc.health.v1 service name /health asks
	// about. Empty means the server's overall health ("").
	HealthService string `yaml:"health_service,omitempty"`
	// Resilience configures the client chain to this upstream (package
	// interceptors: bulkhead, breaker, retry, balancing, ejection, health
	// checking, DNS refresh), with the chain's own field names and
	// defaults (see interceptors.Config). name, target and addresses come
	// from this upstream. The edge's deadline of a call is Timeout (or
	// routes.overrides); the chain adds none of its own unless
	// resilience.timeout or method_timeouts is written, which then also
	// bounds the call (the shorter wins). Older configs set the chain's
	// timeout there, so it keeps loading; new ones need neither.
	// Absent means every default.
	Resilience interceptors.Config `yaml:"resilience,omitempty"`
	// TLS dials the upstream over TLS or mTLS; absent means plaintext.
	TLS UpstreamTLSConfig `yaml:"tls,omitempty"`
	// Services are the full names of the proto services this upstream
	// serves that the edge loads at run time, from Descriptors or by
	// Reflection ("acme.shipping.v1.ShippingService"): every
	// google.api.http binding of theirs becomes a route. A built-in
	// upstream (inventory, payment, order) that lists its own service
	// moves to this path too. Empty: the upstream serves the services the
	// edge is built with.
	Services []string `yaml:"services,omitempty"`
	// Descriptors is a FileDescriptorSet file holding Services and
	// everything they import (buf build -o FILE, or protoc
	// --include_imports --descriptor_set_out=FILE), at most 16 MiB,
	// relative to the config file. Read again at every reload.
	Descriptors string `yaml:"descriptors,omitempty"`
	// Reflection asks the upstream for Services by gRPC server reflection
	// (grpc.reflection.v1, then v1alpha) at start and at every reload:
	// within 10s, 1000 files and 16 MiB. When it fails the reload is
	// refused and the running descriptors stay. Exactly one of
	// Descriptors and Reflection goes with Services.
	Reflection bool `yaml:"reflection,omitempty"`
}

// RoutesConfig holds per-route limits.
type RoutesConfig struct {
	// MaxBodyBytes bounds a request body; larger is 413. Zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64 `yaml:"max_body_bytes,omitempty"`
	// MaxTimeout caps the deadline a client may ask for with Grpc-Timeout.
	// Zero means DefaultMaxTimeout. Every route's timeout must not exceed
	// its maximum.
	MaxTimeout time.Duration `yaml:"max_timeout,omitempty"`
	// Overrides change the limits of the routes each key selects. A
	// selector is "[METHOD ]TARGET" (package gateway/route/selector):
	// TARGET is "*" (every route), a path template ("/api/orders/{id}"), a
	// route group ("/api/orders/**": that template and every one below
	// it), an RPC ("portico.order.v1.OrderService/GetOrder", also with a
	// leading "/" or a "." before the method) or a service
	// ("portico.order.v1.OrderService/*"); METHOD narrows it to that
	// method. A key that selects no route, and two keys selecting one
	// route, are errors.
	Overrides map[string]RouteOverride `yaml:"overrides,omitempty"`
}

// RouteOverride changes one route's limits; zero fields keep the default.
type RouteOverride struct {
	// Timeout replaces the upstream's timeout for this route.
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// MaxTimeout replaces routes.max_timeout for this route.
	MaxTimeout time.Duration `yaml:"max_timeout,omitempty"`
	// MaxBodyBytes replaces routes.max_body_bytes for this route.
	MaxBodyBytes int64 `yaml:"max_body_bytes,omitempty"`
	// MaxDuration replaces streams.max_duration for a streaming route.
	MaxDuration time.Duration `yaml:"max_duration,omitempty"`
	// IdleTimeout replaces streams.idle_timeout for a streaming route.
	IdleTimeout time.Duration `yaml:"idle_timeout,omitempty"`
	// StaleIfError changes the route's permission to answer a kept copy
	// while its upstream fails (GET routes only); absent keeps the RPC's
	// (portico.api.v1.edge) option.
	StaleIfError StaleOverride `yaml:"stale_if_error,omitempty"`
}

// HealthConfig configures GET /health.
type HealthConfig struct {
	// Timeout bounds each upstream's health check. Zero means
	// DefaultHealthTimeout.
	Timeout time.Duration `yaml:"timeout,omitempty"`
}
