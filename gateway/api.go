package gateway

import (
	"errors"
	"net/http"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/problem"
)

// serveAPI runs the /api pipeline; each step answers before any upstream
// call when it rejects:
//
//	authenticate  401 UNAUTHENTICATED
//	rate limit    429 RATE_LIMIT_EXCEEDED, CALLER_BANNED (limits.go; a failed
//	              authentication counts against failed_auth only)
//	authorize     403 FORBIDDEN (role, method and path only)
//	route         404 ROUTE_NOT_FOUND, 405 METHOD_NOT_ALLOWED
//	prepare       400, 413, 415 (idempotency key, Grpc-Timeout, query, body
//	              size and encoding)
//	forward       grpc-gateway's handler with the deadline: a JSON body
//	              that does not decode is 400 before any call; errors through
//	              the status table (response.go)
func (s *Server) serveAPI(w *responseWriter, r *http.Request) {
	ex := w.ex
	rt, allow := s.table.Match(r.Method, r.URL.Path)
	if rt != nil { // label 401s and 403s by route too; the answer order is unchanged
		ex.route = rt.Pattern
	}
	p, err := s.auth.Authenticate(r)
	if s.limit(w, r, rt, p, err) {
		return
	}
	if err != nil {
		s.writeProblem(w, r, unauthenticated(err))
		return
	}
	ex.principal = p
	if !auth.Allowed(p, r.Method, r.URL.Path) {
		s.writeProblem(w, r, problem.New(problem.CodeForbidden,
			"Role "+p.Role+" may not "+r.Method+" "+r.URL.EscapedPath()+"."))
		return
	}
	if rt == nil {
		s.writeProblem(w, r, notRouted(r, allow))
		return
	}
	ep := s.endpoints[rt]
	ex.ep, ex.route, ex.upstream = ep, rt.Pattern, rt.Upstream
	fwd, cancel, prob := s.prepare(w, r, ep)
	if prob != nil {
		s.writeProblem(w, r, prob)
		return
	}
	defer cancel()
	s.mux.ServeHTTP(w, fwd)
}

func unauthenticated(err error) *problem.Problem {
	p := problem.New(problem.CodeUnauthenticated, "Send a valid token as Authorization: Bearer <token>.")
	p.Challenge = `Bearer realm="portico"`
	if errors.Is(err, auth.ErrInvalidCredentials) {
		p.Challenge += `, error="invalid_token"`
		p.Detail = "The bearer token is not valid."
	}
	return p
}

func notRouted(r *http.Request, allow []string) *problem.Problem {
	if len(allow) == 0 {
		return problem.New(problem.CodeRouteNotFound, "No route matches "+r.URL.EscapedPath()+".")
	}
	p := problem.New(problem.CodeMethodNotAllowed, r.Method+" is not allowed on "+r.URL.EscapedPath()+".")
	p.Allow = allow
	return p
}
