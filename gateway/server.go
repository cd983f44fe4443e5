package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/metrics"
	genopenapi "github.com/portico-gateway/portico/gen/openapi"
	"github.com/portico-gateway/portico/internal/logging"
)

// Server is the REST/JSON edge. Build it with New; it is safe for
// concurrent use. Its config lives in an immutable snapshot that Reload
// swaps atomically (snapshot.go, reload.go).
type Server struct {
	o        options
	log      *slog.Logger
	registry *prometheus.Registry
	metrics  *metrics.Metrics
	reloads  *reloadMetrics
	openAPI  []byte
	ops      map[string]http.HandlerFunc
	problems problemPages
	handler  http.Handler

	snap     atomic.Pointer[snapshot] // the live config; never nil after New
	reloadMu sync.Mutex               // serializes Reload and Rollback
	history  *history
	serving  atomic.Bool // Serve is accepting
	draining atomic.Bool // shutdown has begun
	// drainWait waits out the drain delay; nil waits on a timer. Tests
	// replace it to hold the drain open until they have looked at it.
	drainWait func(time.Duration)
	closeOnce sync.Once
	closed    bool // under reloadMu: no reload after Close
	closeErr  error
}

// New validates cfg (defaults applied), builds the route table from the
// registration list, dials every upstream through the DialFunc (and once
// more with plain Dial, for /health) and registers the generated handlers:
// the first snapshot. ctx bounds dialing only. On error nothing is left
// open.
func New(ctx context.Context, cfg Config, opts ...Option) (*Server, error) {
	o := options{dial: defaultDial, registrations: registrations}
	for _, opt := range opts {
		opt(&o)
	}
	if o.nonces == nil { // the process's: a reload must not forget nonces
		o.nonces = &auth.MemoryNonces{}
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{o: o, log: o.logger, registry: o.registry}
	if err := s.setup(); err != nil {
		return nil, err
	}
	sn, err := s.build(ctx, cfg, nil)
	if err != nil {
		return nil, err
	}
	s.commit(sn, sourceStart)
	s.handler = http.HandlerFunc(s.serveHTTP)
	return s, nil
}

// setup makes what the Server keeps across configs: logger, metrics, the
// OpenAPI document, the operational endpoints and the problem pages.
func (s *Server) setup() error {
	var err error
	if s.log == nil {
		s.log = logging.New(os.Stderr, "gateway", slog.LevelInfo)
	}
	if s.registry == nil {
		s.registry = prometheus.NewRegistry()
		s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	if s.metrics, err = metrics.New(s.registry); err != nil {
		return fmt.Errorf("gateway: metrics: %w", err)
	}
	if s.reloads, err = newReloadMetrics(s.registry); err != nil {
		return fmt.Errorf("gateway: metrics: %w", err)
	}
	if s.openAPI = s.o.openAPI; s.openAPI == nil {
		s.openAPI = genopenapi.JSON
	}
	s.history = newHistory()
	s.ops = s.opsHandlers()
	if s.problems, err = renderProblemPages(); err != nil {
		return fmt.Errorf("gateway: problem pages: %w", err)
	}
	return nil
}

// Config returns the config in effect (defaults applied).
func (s *Server) Config() Config { return s.snap.Load().cfg }

// Handler returns the edge's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves on lis until ctx is done, then shuts down (shutdown.go).
// It returns nil after a clean shutdown.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	cfg := s.Config() // the HTTP server's own limits apply from the start
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: cfg.HTTP.ReadHeaderTimeout,
		ReadTimeout:       cfg.HTTP.ReadTimeout,
		IdleTimeout:       cfg.HTTP.IdleTimeout,
		MaxHeaderBytes:    cfg.HTTP.MaxHeaderBytes, // the handler enforces it exactly (headerSize)
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		// "OPTIONS *" reaches the edge too, so its answer has an X-Trace-Id.
		DisableGeneralOptionsHandler: true,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(lis) }()
	s.serving.Store(true)
	s.log.Info("serving", "addr", lis.Addr().String(), "version", s.snap.Load().version.ID)
	select {
	case err := <-errc:
		s.serving.Store(false)
		s.Close()
		return fmt.Errorf("gateway: serve: %w", err)
	case <-ctx.Done():
	}
	s.shutdown(hs, errc)
	return s.Close()
}

// Close retires the live config: its upstream connections, /health's
// included, close once no request uses them. Serve calls it when it
// returns; calling it again is harmless.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.reloadMu.Lock()
		defer s.reloadMu.Unlock()
		s.closed = true
		if sn := s.snap.Load(); sn != nil {
			sn.release(s)
		}
	})
	return s.closeErr
}
