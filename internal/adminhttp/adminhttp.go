// Package adminhttp is a service process's admin HTTP server, on its own
// address (--admin-listen): /metrics (Prometheus, OpenMetrics with
// exemplars when asked), /healthz/live (200 while the process answers) and
// /healthz/ready (200 while the service's grpc.health.v1 status is
// SERVING, else 503), each GET or HEAD only. It never shares the gRPC
// port, so a scraper or probe needs no gRPC.
package adminhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config configures a Server.
type Config struct {
	// Gatherer is served at /metrics. Required.
	Gatherer prometheus.Gatherer
	// Ready reports whether the service takes traffic. Required.
	Ready func(context.Context) bool
	// Logger receives lifecycle events. Required.
	Logger *slog.Logger
}

// Server is the admin HTTP server.
type Server struct {
	cfg Config
	h   http.Handler
}

// New validates cfg and builds the server.
func New(cfg Config) (*Server, error) {
	if cfg.Gatherer == nil || cfg.Ready == nil || cfg.Logger == nil {
		return nil, errors.New("adminhttp: Config needs Gatherer, Ready and Logger")
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.HandleFunc("GET /healthz/live", func(w http.ResponseWriter, _ *http.Request) { status(w, true) })
	mux.HandleFunc("GET /healthz/ready", func(w http.ResponseWriter, r *http.Request) { status(w, cfg.Ready(r.Context())) })
	return &Server{cfg: cfg, h: mux}, nil
}

// Handler returns the server's handler.
func (s *Server) Handler() http.Handler { return s.h }

// Serve serves on lis until ctx ends, then shuts down within a second.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	hs := &http.Server{Handler: s.h, ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(lis) }()
	s.cfg.Logger.Info("admin serving", "addr", lis.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("admin: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	<-errc
	return nil
}

func status(w http.ResponseWriter, up bool) {
	code, st := http.StatusOK, "UP"
	if !up {
		code, st = http.StatusServiceUnavailable, "DOWN"
	}
	b, _ := json.Marshal(map[string]string{"status": st})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
