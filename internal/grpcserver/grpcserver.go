// Package grpcserver builds the gRPC server every Portico service runs: the
// same limits, interceptor chain, health service, reflection and graceful
// shutdown in each process.
//
// Every service runs the same unary server chain, built by Chain (see there
// for the order).
//
// Every call but health and reflection needs a verified identity
// (Config.Identity, package interceptors/identity); a plaintext caller
// without one gets UNAUTHENTICATED, never a handshake failure.
//
// Health (grpc.health.v1) reports SERVING while Config.Ready succeeds,
// NOT_SERVING when it fails and from the moment shutdown begins (the
// readiness split: liveness is the process answering at all).
//
// Shutdown, once Serve's context ends: health turns NOT_SERVING at once, so
// clients that health-check move their calls elsewhere; the server keeps
// serving for DrainDelay; then health Watch streams end, the listener
// closes (GracefulStop) and in-flight calls finish within ShutdownGrace,
// after which the rest are cut.
package grpcserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/faults"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/adminhttp"
	"github.com/portico-gateway/portico/internal/procmetrics"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// Config configures a Server. The zero value of every optional field has the
// documented default.
type Config struct {
	// Service is the fully qualified gRPC service name reported by health,
	// e.g. "portico.inventory.v1.InventoryService". Required.
	Service string
	// Logger receives access lines and lifecycle events. Required.
	Logger *slog.Logger
	// Ready probes the service's dependencies (its database). nil means
	// always ready.
	Ready func(context.Context) error
	// ReadyInterval is how often Ready runs. Zero means 2s.
	ReadyInterval time.Duration
	// MaxRecvMsgSize bounds a request message in bytes. Zero means 1 MiB.
	MaxRecvMsgSize int
	// MaxConcurrentStreams bounds in-flight calls per connection. Zero
	// means 256.
	MaxConcurrentStreams uint32
	// ShutdownGrace bounds how long in-flight calls may finish after
	// the listener closes before they are cut. Zero means 10s.
	ShutdownGrace time.Duration
	// Identity verifies each call's identity assertion (see Chain). nil
	// verifies nothing: every call but health and reflection is
	// UNAUTHENTICATED, so a service started without keys fails closed.
	Identity *identity.Verifier
	// TrustMetadata, with no Identity, trusts the principal metadata a
	// local caller (loopback, Unix socket, in-process) sends as sent,
	// which is how services behaved before identity keys existed, and
	// refuses every other caller UNAUTHENTICATED
	// (identity.TrustLocalUnaryServerInterceptor). The cmd layer sets it
	// only for a service started without keys, and warns: anyone who can
	// run a process on the host can be anyone.
	TrustMetadata bool
	// TLS, when set, serves TLS (or mTLS, with ClientCAs) instead of
	// plaintext (package tlsconfig builds it from files). nil means
	// plaintext.
	TLS *tls.Config
	// DrainDelay is how long the server keeps serving, health NOT_SERVING,
	// after shutdown begins and before the listener closes, so clients and
	// load balancers move away first (Kubernetes: the preStop delay). Zero
	// means none.
	DrainDelay time.Duration
	// Faults injects faults into matching calls (see Chain). Empty means
	// none: production processes never set it.
	Faults faults.Rules
	// Background work (an expiry sweeper, a reconciler) runs while the
	// server serves, each function in its own goroutine, with a context
	// that ends when shutdown begins; Serve returns after they have all
	// returned.
	Background []func(context.Context)
	// Observe is what the service exposes about itself (traces, metrics,
	// the admin address); its zero value exposes nothing.
	Observe Observe

	metrics *procmetrics.Server // from Observe.Registry, set by New
}

// Observe configures a service's observability. Every field is optional.
type Observe struct {
	// Tracing records a server span per call (health checks and
	// reflection excepted), continuing the caller's traceparent. nil
	// means none: the trace id still travels (package traceid).
	Tracing *telemetry.Provider
	// Registry receives the gRPC server metrics, set to zero for every
	// method at start, and is served at AdminListen's /metrics. nil means
	// no metrics.
	Registry *prometheus.Registry
	// AdminListen is the admin HTTP address (package adminhttp: /metrics,
	// /healthz/live, /healthz/ready). "" means none.
	AdminListen string
}

// Server is a configured gRPC server with health and reflection.
type Server struct {
	cfg        Config
	grpc       *grpc.Server
	health     *health.Server
	endWatches context.CancelFunc // ends health Watch streams (health.go)
}

// New validates cfg and builds the server. Register services on GRPC()
// before calling Serve. The server's stream workers (streamWorkers) run
// from New until Serve or ListenAndServe returns; a server that is never
// served ends them with GRPC().Stop().
func New(cfg Config) (*Server, error) {
	if cfg.Service == "" {
		return nil, errors.New("grpcserver: Service is required")
	}
	if cfg.Logger == nil {
		return nil, errors.New("grpcserver: Logger is required")
	}
	if cfg.ReadyInterval < 0 || cfg.MaxRecvMsgSize < 0 || cfg.ShutdownGrace < 0 || cfg.DrainDelay < 0 {
		return nil, errors.New("grpcserver: ReadyInterval, MaxRecvMsgSize, ShutdownGrace and DrainDelay must not be negative")
	}
	setDefaults(&cfg)
	opts := serverOptions(cfg)
	if cfg.Observe.Registry != nil {
		m, err := procmetrics.NewServer(cfg.Observe.Registry)
		if err != nil {
			return nil, fmt.Errorf("grpcserver: metrics: %w", err)
		}
		cfg.metrics = m
	}
	if cfg.Observe.Tracing != nil {
		opts = append(opts, grpc.StatsHandler(cfg.Observe.Tracing.ServerHandler()))
	}
	g := grpc.NewServer(append(opts,
		grpc.ChainUnaryInterceptor(unary(Chain(cfg))...),
		// Portico's APIs are unary; a stream other than reflection or a
		// health watch needs an identity too.
		grpc.ChainStreamInterceptor(streamIdentity(cfg)...),
		grpc.MaxRecvMsgSize(cfg.MaxRecvMsgSize),
		grpc.MaxSendMsgSize(4<<20),
		grpc.MaxConcurrentStreams(cfg.MaxConcurrentStreams),
		grpc.NumStreamWorkers(streamWorkers),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: time.Minute, Timeout: 20 * time.Second}),
	)...)
	h := health.NewServer()
	stopping, endWatches := context.WithCancel(context.Background())
	healthpb.RegisterHealthServer(g, &healthServer{Server: h, stopping: stopping})
	reflection.Register(g)
	return &Server{cfg: cfg, grpc: g, health: h, endWatches: endWatches}, nil
}

// streamWorkers is how many goroutines the server keeps to run calls: a
// call runs on an idle one, whose stack has already grown to what a
// handler needs (a service's handlers reach deep into SQLite), instead of
// a new goroutine growing its stack step by step (runtime.morestack,
// 3% of the services' CPU in the order saga). A call finding none idle
// gets a goroutine of its own, as without workers.
const streamWorkers = 32

// serverOptions returns the transport credentials: TLS when configured.
func serverOptions(cfg Config) []grpc.ServerOption {
	if cfg.TLS == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(cfg.TLS))}
}

func setDefaults(c *Config) {
	if c.ReadyInterval == 0 {
		c.ReadyInterval = 2 * time.Second
	}
	if c.MaxRecvMsgSize == 0 {
		c.MaxRecvMsgSize = 1 << 20
	}
	if c.MaxConcurrentStreams == 0 {
		c.MaxConcurrentStreams = 256
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = 10 * time.Second
	}
}

func panicHandler(l *slog.Logger) func(ctx context.Context, p any) error {
	return func(ctx context.Context, p any) error {
		l.ErrorContext(ctx, "panic in handler", "panic", fmt.Sprint(p))
		return status.Error(codes.Internal, "internal error")
	}
}

// GRPC returns the underlying server for service registration.
func (s *Server) GRPC() *grpc.Server { return s.grpc }

// ListenAndServe serves on lis, or when lis is nil on a new TCP listener
// on addr, as Serve does. Whatever it returns, the server is stopped.
func (s *Server) ListenAndServe(ctx context.Context, addr string, lis net.Listener) error {
	if lis == nil {
		var err error
		if lis, err = new(net.ListenConfig).Listen(ctx, "tcp", addr); err != nil {
			s.grpc.Stop()
			return fmt.Errorf("%s: listen %s: %w", s.cfg.Service, addr, err)
		}
	}
	return s.Serve(ctx, lis)
}

// Serve serves on lis until ctx is done, then shuts down (see the package
// doc): health NOT_SERVING, DrainDelay, GracefulStop within ShutdownGrace. Background
// work runs meanwhile. It returns nil after a clean shutdown. Whatever it
// returns, the server is stopped.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	defer s.grpc.Stop() // after a clean shutdown it has nothing left to do
	probeCtx, stopProbe := context.WithCancel(ctx)
	defer stopProbe()
	s.probe(probeCtx) // first probe before serving, so health is never stale
	var bg sync.WaitGroup
	defer bg.Wait() // every return path below cancels probeCtx first
	for _, f := range s.cfg.Background {
		bg.Go(func() { f(probeCtx) })
	}
	probeDone := make(chan struct{})
	go func() { defer close(probeDone); s.probeLoop(probeCtx) }()
	if s.cfg.metrics != nil {
		s.cfg.metrics.Init(s.grpc) // services are registered by now
	}
	stopAdmin, err := s.serveAdmin()
	if err != nil {
		stopProbe()
		<-probeDone
		lis.Close()
		return err
	}
	defer stopAdmin()

	errc := make(chan error, 1)
	go func() { errc <- s.grpc.Serve(lis) }()
	s.cfg.Logger.Info("serving", "addr", lis.Addr().String())
	select {
	case err := <-errc:
		stopProbe()
		<-probeDone
		s.endWatches()
		return err
	case <-ctx.Done():
	}
	s.health.Shutdown()
	stopProbe()
	<-probeDone
	s.cfg.Logger.Info("shutting down", "drainDelay", s.cfg.DrainDelay.String(), "grace", s.cfg.ShutdownGrace.String())
	if s.cfg.DrainDelay > 0 {
		t := time.NewTimer(s.cfg.DrainDelay)
		<-t.C
	}
	s.endWatches()
	s.stop()
	<-errc
	s.cfg.Logger.Info("stopped")
	return nil
}

// serveAdmin starts the admin HTTP server when Observe.AdminListen is set;
// stop ends it (after the gRPC server, so readiness reads 503 meanwhile).
func (s *Server) serveAdmin() (stop func(), err error) {
	o := s.cfg.Observe
	if o.AdminListen == "" {
		return func() {}, nil
	}
	var g prometheus.Gatherer = prometheus.NewRegistry()
	if o.Registry != nil {
		g = o.Registry
	}
	a, err := adminhttp.New(adminhttp.Config{Gatherer: g, Ready: s.serving, Logger: s.cfg.Logger})
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", o.AdminListen)
	if err != nil {
		return nil, fmt.Errorf("%s: admin listen %s: %w", s.cfg.Service, o.AdminListen, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Serve(ctx, lis) }()
	return func() { cancel(); <-done }, nil
}

// serving reports the service's grpc.health.v1 status: SERVING or not.
func (s *Server) serving(ctx context.Context) bool {
	r, err := s.health.Check(ctx, &healthpb.HealthCheckRequest{Service: s.cfg.Service})
	return err == nil && r.GetStatus() == healthpb.HealthCheckResponse_SERVING
}

func (s *Server) stop() {
	done := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(done) }()
	t := time.NewTimer(s.cfg.ShutdownGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.cfg.Logger.Warn("shutdown grace expired; cutting in-flight calls")
		s.grpc.Stop()
		<-done
	}
}

func (s *Server) probeLoop(ctx context.Context) { Every(s.cfg.ReadyInterval, s.probe)(ctx) }

// Every returns background work that calls f every interval until its
// context ends (for Config.Background: expiry sweepers, reconcilers).
func Every(interval time.Duration, f func(context.Context)) func(context.Context) {
	return func(ctx context.Context) {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				f(ctx)
			}
		}
	}
}

func (s *Server) probe(ctx context.Context) {
	st := healthpb.HealthCheckResponse_SERVING
	if s.cfg.Ready != nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := s.cfg.Ready(pctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			st = healthpb.HealthCheckResponse_NOT_SERVING
			s.cfg.Logger.Warn("not ready", "err", err.Error())
		}
	}
	s.health.SetServingStatus("", st)
	s.health.SetServingStatus(s.cfg.Service, st)
}

// streamIdentity is the stream half of the identity layer (Chain).
func streamIdentity(cfg Config) []grpc.StreamServerInterceptor {
	if cfg.Identity == nil && cfg.TrustMetadata {
		return []grpc.StreamServerInterceptor{identity.TrustLocalStreamServerInterceptor()}
	}
	return []grpc.StreamServerInterceptor{identity.StreamServerInterceptor(cfg.Identity)}
}
