package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/portico-gateway/portico/gateway/health"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// opsHandlers are the operational endpoints; only /metrics needs a token
// (admin role), since its series describe the whole deployment.
func (s *Server) opsHandlers() map[string]http.HandlerFunc {
	metrics := s.adminOnly(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	return map[string]http.HandlerFunc{
		"/health":        s.serveHealth,
		"/healthz/live":  serveLive,
		"/healthz/ready": s.serveReady,
		"/metrics":       metrics.ServeHTTP,
		"/openapi.json":  s.serveOpenAPI,
	}
}

// opsAdminRoutes are the operational endpoints of the admin listener,
// open to anyone there: /metrics and the probes.
func (s *Server) opsAdminRoutes() map[string]adminRoute {
	return map[string]adminRoute{
		"/metrics":       openAdminRoute(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{EnableOpenMetrics: true}).ServeHTTP),
		"/healthz/live":  openAdminRoute(serveLive),
		"/healthz/ready": openAdminRoute(s.serveReady),
	}
}

// adminOnly serves h to a caller with the admin role: 401 without valid
// credentials, 403 for any other role.
func (s *Server) adminOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := exchangeFrom(r.Context()).snap.auth.Authenticate(r)
		if err != nil {
			s.refuseAuth(w, r, authProblem(err))
			return
		}
		exchangeFrom(r.Context()).principal = p
		if !p.HasRole(callmeta.RoleAdmin) {
			s.refuseAuth(w, r, problem.New(problem.CodeForbidden, "Role "+p.Role+" may not read "+r.URL.Path+"."))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// serveHealth reports the edge and every upstream's grpc.health.v1 status,
// and its Redis (redisHealth); 503 when an upstream is DOWN, or when the
// edge refuses every request for Redis (a failing Redis alone is DEGRADED
// with 200: the edge still serves). The snapshot's checker reuses a round
// of checks for health.DefaultMaxAge and runs one at a time, so /health is
// no amplifier; rep is this request's copy, which limits.health extends.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	sn := s.snapFor(r)
	rep := sn.health.Check(r.Context())
	code := http.StatusOK
	if rep.Status != health.Up {
		code = http.StatusServiceUnavailable
	}
	body, refusing := redisHealth(sn, &rep)
	if refusing {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, body)
}

// serveLive answers 200 while the process can answer at all; it never
// touches an upstream, so a dependency outage never restarts the edge.
func serveLive(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": health.Up})
}

// serveReady answers 200 while serving; 503 before Serve, from the moment
// shutdown begins, and while a required upstream has no usable instance
// (ops.ready_requires), with the reason.
func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	if why := s.notReady(s.snapFor(r)); why != "" {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": health.Down, "reason": why})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": health.Up})
}

// serveOpenAPI serves the document as built for the snapshot (roles under
// its auth.policy, its loaded services) or the built-in one: gzip to a
// client that accepts it, a weak ETag and If-None-Match (apiref.File).
func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	doc := s.openAPIServed
	if d := s.snapFor(r).openAPIServed; d != nil {
		doc = d
	}
	doc.Serve(w, r)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // a value JSON cannot hold: a 500 problem, never a broken 200
		problem.New(problem.CodeInternal, "The answer could not be encoded as JSON.").Write(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// snapFor returns the snapshot of r: the one serveHTTP took, or the live
// one for a handler served elsewhere (the admin listener).
func (s *Server) snapFor(r *http.Request) *snapshot {
	if sn := exchangeFrom(r.Context()).snap; sn != nil {
		return sn
	}
	return s.snap.Load()
}
