package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/portico-gateway/portico/gateway/health"
)

// opsHandlers are the operational endpoints; none needs a token.
func (s *Server) opsHandlers() map[string]http.HandlerFunc {
	metrics := promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{})
	return map[string]http.HandlerFunc{
		"/health":        s.serveHealth,
		"/healthz/live":  serveLive,
		"/healthz/ready": s.serveReady,
		"/metrics":       metrics.ServeHTTP,
		"/openapi.json":  s.serveOpenAPI,
	}
}

// serveHealth reports the edge and every upstream's grpc.health.v1 status;
// 503 when any is DOWN.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	rep := s.health.Check(r.Context())
	body := s.limits.health(&rep)
	code := http.StatusOK
	if rep.Status != health.Up {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, body)
}

// serveLive answers 200 while the process can answer at all; it never
// touches an upstream, so a dependency outage never restarts the edge.
func serveLive(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": health.Up})
}

// serveReady answers 200 while serving, 503 before Serve and from the
// moment shutdown begins.
func (s *Server) serveReady(w http.ResponseWriter, _ *http.Request) {
	if s.ready.Load() {
		writeJSON(w, http.StatusOK, map[string]string{"status": health.Up})
		return
	}
	writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": health.Down})
}

func (s *Server) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(s.openAPI)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
