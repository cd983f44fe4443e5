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
	"go.opentelemetry.io/otel/trace"

	"github.com/portico-gateway/portico/gateway/apiref"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/console"
	"github.com/portico-gateway/portico/gateway/edgemetrics"
	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/gateway/shed"
	"github.com/portico-gateway/portico/gateway/trend"
	genopenapi "github.com/portico-gateway/portico/gen/openapi"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/procmetrics"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// Server is the REST/JSON edge. Build it with New; it is safe for
// concurrent use. Its config lives in an immutable snapshot that Reload
// swaps atomically (snapshot.go, reload.go).
type Server struct {
	o         options
	log       *slog.Logger
	registry  *prometheus.Registry
	metrics   *edgemetrics.Metrics
	reloads   *reloadMetrics
	shedTotal *prometheus.CounterVec // portico_gateway_shed_total, for every snapshot's shedder
	tracer    trace.Tracer
	openAPI   []byte
	// openAPIServed is openAPI as /openapi.json serves it (gzip and
	// identity, ETag): what a snapshot without its own document serves.
	openAPIServed *apiref.File
	ops           map[string]http.HandlerFunc
	problems      problemPages
	// nonces is the signed requests' nonce store, kept across reloads.
	nonces nonces
	// ticketKey signs stream tickets when the config has no identity
	// keys to derive one from (tickets.go).
	ticketKey []byte
	// copies are the kept GET answers for stale answers, kept across
	// reloads (stale_store.go).
	copies  *staleCopies
	handler http.Handler
	// adminHandler is AdminHandler, served on admin_listen.
	adminHandler http.Handler
	lis          *listeners // set by Serve under reloadMu; nil before
	// conns caps the API's connections (connlimit.go), across reloads.
	conns *connLimit

	snap     atomic.Pointer[snapshot] // the live config; never nil after New
	reloadMu sync.Mutex               // serializes Reload and Rollback
	applied  chan struct{}            // closed by the next commit; under reloadMu
	history  *history
	trend    *trend.Recorder // the upstreams' traffic history; Serve samples it
	serving  atomic.Bool     // Serve is accepting
	draining atomic.Bool     // shutdown has begun
	// drainWait waits out the drain delay; nil waits on a timer. Tests
	// replace it to hold the drain open until they have looked at it.
	drainWait func(time.Duration)
	closeOnce sync.Once
	closed    bool // under reloadMu: no reload after Close
	// fileSum is the SHA-256 of the config file as ReloadFile last read
	// it, under reloadMu: a watch that reports content already read is
	// no change (it must not undo a rollback made since).
	fileSum  [32]byte
	closeErr error

	// bodies counts the /api requests per client address whose bodies are
	// arriving, and callers those per caller in flight (admission.go); they
	// outlive reloads, each snapshot giving the caps.
	bodies, callers shed.Keyed

	// streams counts the open streams, in all and per caller; streamStop
	// is closed when shutdown ends them (stream.go).
	streams       streamCounts
	streamStop    context.Context // done once the edge ends its streams
	stopStreams   context.CancelFunc
	streamMetrics *streamMetrics

	// consoleSessions are the browsers signed in to the console
	// (console_session.go); they outlive reloads, each use checking the
	// session's token against the live config.
	consoleSessions console.Sessions
}

// New checks cfg (defaults applied) exactly as config.Load checks a file,
// with CheckRoutes (config.Config.Check), builds the route table from the
// registration list, dials every upstream through the DialFunc (and once
// more with plain Dial, for /health) and registers the generated handlers:
// the first snapshot. ctx bounds dialing and server reflection only. On
// error nothing is left open.
func New(ctx context.Context, cfg config.Config, opts ...Option) (*Server, error) {
	o := options{dial: defaultDial, registrations: registrations}
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := cfg.WithDefaults().Check(routeCheck(ctx, o.registrations))
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, log: o.logger, registry: o.registry, ticketKey: newTicketKey()}
	// A cancelCtx, so each stream's context.AfterFunc on it starts no
	// goroutine.
	s.streamStop, s.stopStreams = context.WithCancel(context.Background())
	s.nonces = nonces{fixed: o.nonces, now: o.nonceClock, probed: o.redisProbed}
	s.consoleSessions.Now = o.consoleClock
	if err := s.setup(); err != nil {
		s.Close()
		return nil, err
	}
	s.nonces.log = s.log
	sn, err := s.build(ctx, cfg, nil)
	if err != nil {
		return nil, err
	}
	s.commit(sn, sourceStart)
	s.handler = s.refusePreface(http.HandlerFunc(s.serveHTTP), false)
	s.adminHandler = s.refusePreface(s.AdminHandler(), true)
	return s, nil
}

// setup makes what the Server keeps across configs: logger, metrics,
// tracer, the OpenAPI document, the operational endpoints and the problem
// pages. Everything else made from config is in the snapshot (build),
// but the nonce store, which a reload must not forget (nonces).
func (s *Server) setup() error {
	var err error
	if s.log == nil {
		s.log = logging.New(os.Stderr, "gateway", slog.LevelInfo)
	}
	if s.registry == nil {
		s.registry = procmetrics.NewRegistry()
	}
	if s.metrics, err = edgemetrics.New(s.registry); err != nil {
		return fmt.Errorf("gateway: metrics: %w", err)
	}
	if s.reloads, err = newReloadMetrics(s.registry); err != nil {
		return fmt.Errorf("gateway: metrics: %w", err)
	}
	if s.shedTotal, err = newShedTotal(s.registry); err != nil {
		return fmt.Errorf("gateway: shed metrics: %w", err)
	}
	if s.streamMetrics, err = newStreamMetrics(s.registry); err != nil {
		return fmt.Errorf("gateway: stream metrics: %w", err)
	}
	s.copies = newStaleCopies()
	if err = s.registry.Register(staleGauge{s.copies}); err != nil {
		return fmt.Errorf("gateway: stale metrics: %w", err)
	}
	if err = s.registry.Register(redisGauge{s}); err != nil {
		return fmt.Errorf("gateway: rate-limit metrics: %w", err)
	}
	if s.conns, err = newConnLimit(s.registry, s.log); err != nil {
		return fmt.Errorf("gateway: connection metrics: %w", err)
	}
	tp := s.o.telemetry
	if tp == nil {
		tp = telemetry.Disabled(telemetry.ServiceGateway)
	}
	s.tracer = tp.TracerProvider().Tracer(telemetry.Scope)
	if s.openAPI = s.o.openAPI; s.openAPI == nil {
		s.openAPI = genopenapi.JSON
	}
	if s.openAPIServed, err = apiref.Document(s.openAPI); err != nil {
		return fmt.Errorf("gateway: /openapi.json: %w", err)
	}
	s.history = newHistory()
	s.trend = s.newTrend()
	s.ops = s.opsHandlers()
	if s.problems, err = renderProblemPages(); err != nil {
		return fmt.Errorf("gateway: problem pages: %w", err)
	}
	return nil
}

// knownRoutes lists every route eps serves, for the metrics' zero series.
func knownRoutes(eps map[*route.Route]*endpoint) []edgemetrics.Route {
	out := make([]edgemetrics.Route, 0, len(eps))
	for rt := range eps {
		out = append(out, edgemetrics.Route{Route: rt.Template, Method: rt.Method, Upstream: rt.Upstream})
	}
	return out
}

// Config returns the config in effect (defaults applied).
func (s *Server) Config() config.Config { return s.snap.Load().cfg }

// Handler returns the edge's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves the API on lis, the listener of the config's listen, and,
// when admin_listen is set, the admin API on a listener it opens, until
// ctx is done; then it shuts down (shutdown.go) and returns nil after a
// clean shutdown. Both addresses, the http section and the tls section
// follow reloads (listeners.go).
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	s.reloadMu.Lock()
	err := s.startListeners(lis)
	s.reloadMu.Unlock()
	if err != nil {
		_ = lis.Close()
		s.Close()
		return fmt.Errorf("gateway: admin_listen: %w", err)
	}
	s.serving.Store(true)
	tctx, stopTrend := context.WithCancel(ctx)
	var trendWG sync.WaitGroup
	trendWG.Go(func() { s.trend.Record(tctx) })
	defer trendWG.Wait()
	defer stopTrend()
	s.log.Info("serving", "addr", lis.Addr().String(), "version", s.snap.Load().version.ID,
		"maxConnections", s.conns.limit())
	select {
	case err := <-s.lis.failed:
		s.shutdown(true)
		s.Close()
		return fmt.Errorf("gateway: serve: %w", err)
	case <-ctx.Done():
	}
	s.shutdown(false)
	return s.Close()
}

// ListenAndServe listens on the config's listen and Serves.
func (s *Server) ListenAndServe(ctx context.Context) error {
	addr := s.Config().Listen
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		s.Close()
		return fmt.Errorf("gateway: listen %s: %w", addr, err)
	}
	return s.Serve(ctx, lis)
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
			sn.release(s) // its nonce stores' clients close once it drains
		}
	})
	return s.closeErr
}
