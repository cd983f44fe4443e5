package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/health"
	"github.com/portico-gateway/portico/gateway/metrics"
	"github.com/portico-gateway/portico/gateway/route"
	genopenapi "github.com/portico-gateway/portico/gen/openapi"
	"github.com/portico-gateway/portico/internal/logging"
)

// Server is the REST/JSON edge. Build it with New; it is safe for
// concurrent use.
type Server struct {
	cfg       Config
	log       *slog.Logger
	auth      Authenticator
	policy    *auth.Policy
	cors      *cors
	registry  *prometheus.Registry
	metrics   *metrics.Metrics
	table     *route.Table
	endpoints map[*route.Route]*endpoint
	conns     map[string]*grpc.ClientConn // API calls, through the DialFunc
	probes    map[string]*probe           // /health checks, plain Dial
	mux       *runtime.ServeMux
	health    *health.Checker
	openAPI   []byte
	ops       map[string]http.HandlerFunc
	problems  problemPages
	limits    *limiter // nil without limits
	// nonceRedis is the Redis client of the nonce store New made; closed by Close.
	nonceRedis *redis.Client
	handler    http.Handler
	ready      atomic.Bool
	// drainWait waits out the drain delay; nil waits on a timer. Tests
	// replace it to hold the drain open until they have looked at it.
	drainWait func(time.Duration)
	closeOnce sync.Once
	closeErr  error
}

// New validates cfg (defaults applied), builds the route table from the
// registration list, dials every upstream through the DialFunc (and once
// more with plain Dial, for /health) and registers the generated handlers. ctx bounds dialing only. On error
// nothing is left open.
func New(ctx context.Context, cfg Config, opts ...Option) (*Server, error) {
	o := options{dial: defaultDial, registrations: registrations}
	for _, opt := range opts {
		opt(&o)
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: o.logger, registry: o.registry, auth: o.authenticator}
	if o.nonces == nil { // the process's: a reload must not forget nonces
		o.nonces, s.nonceRedis = processNonces(cfg)
	}
	if err := s.build(o); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.dial(ctx, o); err != nil {
		return nil, err
	}
	s.handler = http.HandlerFunc(s.serveHTTP)
	return s, nil
}

// build sets up everything but the upstream connections.
func (s *Server) build(o options) error {
	var err error
	if s.log == nil {
		s.log = logging.New(os.Stderr, "gateway", slog.LevelInfo)
	}
	if s.registry == nil {
		s.registry = prometheus.NewRegistry()
		s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	if s.table, s.endpoints, err = buildRoutes(s.cfg, o.registrations); err != nil {
		return err
	}
	if err = s.buildAccess(o); err != nil {
		return err
	}
	if s.metrics, err = metrics.New(s.registry); err != nil {
		return fmt.Errorf("gateway: metrics: %w", err)
	}
	if s.openAPI = o.openAPI; s.openAPI == nil {
		s.openAPI = genopenapi.JSON
	}
	if s.limits, err = newLimiter(s.cfg, s.table.Routes(), s.log, o.limitClock); err != nil {
		return err
	}
	s.ops = s.opsHandlers()
	if s.problems, err = renderProblemPages(); err != nil {
		return fmt.Errorf("gateway: problem pages: %w", err)
	}
	return nil
}

// dial connects every upstream, registers the generated handlers on a new
// mux and sets up /health.
//
// /health gets its own connection per upstream, made by Dial and never by
// the DialFunc: over the API connection its checks would pass the client
// resilience chain, so unauthenticated /health calls would feed the
// breakers (two checks against a dead upstream open its breaker, and API
// calls turn from 502 into 503), and an open breaker would report a
// healthy upstream DOWN. A probe must see the upstream, not the chain.
func (s *Server) dial(ctx context.Context, o options) error {
	s.conns, s.probes = map[string]*grpc.ClientConn{}, map[string]*probe{}
	var deps []health.Dependency
	for _, up := range s.cfg.Upstreams {
		cc, err := o.dial(ctx, up)
		if err != nil {
			s.Close()
			return fmt.Errorf("gateway: dial upstream %s: %w", up.Name, err)
		}
		s.conns[up.Name] = cc
		probe, err := newProbe(ctx, up)
		if err != nil {
			s.Close()
			return fmt.Errorf("gateway: dial upstream %s for /health: %w", up.Name, err)
		}
		s.probes[up.Name] = probe
		deps = append(deps, health.Dependency{Name: up.Name, Service: up.HealthService, Conn: probe})
	}
	s.mux = s.newMux()
	for _, reg := range o.registrations {
		if err := reg.register(ctx, s.mux, s.conns[reg.upstream]); err != nil {
			s.Close()
			return fmt.Errorf("gateway: register %s: %w", reg.service, err)
		}
	}
	s.health = health.NewChecker("api-gateway", deps, s.cfg.Health.Timeout)
	return nil
}

// Handler returns the edge's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves on lis until ctx is done, then shuts down: /healthz/ready
// turns 503, the edge keeps serving for DrainDelay, stops accepting, lets
// in-flight requests finish within ShutdownGrace (then cuts them) and
// closes the upstream connections. It returns nil after a clean shutdown.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.HTTP.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.HTTP.ReadTimeout,
		IdleTimeout:       s.cfg.HTTP.IdleTimeout,
		MaxHeaderBytes:    s.cfg.HTTP.MaxHeaderBytes, // the handler enforces it exactly (headerSize)
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		// "OPTIONS *" reaches the edge too, so its answer has an X-Trace-Id.
		DisableGeneralOptionsHandler: true,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(lis) }()
	s.ready.Store(true)
	s.log.Info("serving", "addr", lis.Addr().String())
	select {
	case err := <-errc:
		s.ready.Store(false)
		s.Close()
		return fmt.Errorf("gateway: serve: %w", err)
	case <-ctx.Done():
	}
	s.ready.Store(false)
	s.log.Info("shutting down", "drainDelay", s.cfg.DrainDelay.String(), "grace", s.cfg.ShutdownGrace.String())
	if s.cfg.DrainDelay > 0 {
		if s.drainWait != nil {
			s.drainWait(s.cfg.DrainDelay)
		} else {
			t := time.NewTimer(s.cfg.DrainDelay)
			<-t.C
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		s.log.Warn("shutdown grace expired; cutting in-flight requests")
		_ = hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Warn("serve", "err", err.Error())
	}
	s.log.Info("stopped")
	return s.Close()
}

// Close closes the upstream connections, /health's included. Serve calls it
// when it returns; calling it again is harmless.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		for _, cc := range s.conns {
			s.closeErr = errors.Join(s.closeErr, cc.Close())
		}
		for _, p := range s.probes {
			s.closeErr = errors.Join(s.closeErr, p.close())
		}
		s.closeErr = errors.Join(s.closeErr, s.limits.close())
		if s.nonceRedis != nil {
			s.closeErr = errors.Join(s.closeErr, s.nonceRedis.Close())
		}
	})
	return s.closeErr
}
