package gateway

import (
	"net/http"
	"strings"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/problem"
)

// serveAPI runs the /api pipeline; each step answers before any upstream
// call when it rejects:
//
//	read body     429 TOO_MANY_IN_FLIGHT (the client address's cap), 408
//	              REQUEST_TIMEOUT (too slow), 400 (admission.go)
//	authenticate  401 UNAUTHENTICATED and the other auth codes (authProblem)
//	rate limit    429 RATE_LIMIT_EXCEEDED, CALLER_BANNED (limits.go; a failed
//	              authentication counts against failed_auth only)
//	route         404 ROUTE_NOT_FOUND, 405 METHOD_NOT_ALLOWED
//	authorize     403 FORBIDDEN (the policy: the caller's roles and the route)
//	admit         429 TOO_MANY_IN_FLIGHT (the caller's cap), 503 OVERLOADED
//	              (the edge's or the route group's cap: shedding.go)
//	prepare       400, 413, 415 (idempotency key, Grpc-Timeout, query, body
//	              size and encoding)
//	stream        a server-streaming route leaves here for serveStream
//	              (stream.go): its own caps instead of the in-flight ones,
//	              406, then NDJSON or Server-Sent Events
//	forward       grpc-gateway's handler with the deadline (called directly
//	              when the mux would call it: direct.go): a JSON body that
//	              does not decode is 400 before any call; errors through
//	              the status table (response.go)
func (s *Server) serveAPI(w *responseWriter, r *http.Request) {
	ex, sn := w.ex, w.ex.snap
	rt, allow := sn.table.Match(r.Method, r.URL.Path)
	if rt != nil { // label 401s and 403s by route too; the answer order is unchanged
		ex.route = rt.Template
	}
	if !s.readAPIBody(w, r) {
		return
	}
	p, err := s.authenticate(sn, r)
	if err == nil {
		ex.principal = p // a 429's access line names the caller it limited
	}
	if s.limit(w, r, rt, p, err) {
		return
	}
	if err != nil {
		s.refuseAuth(w, r, authProblem(err))
		return
	}
	if rt == nil && r.URL.Path == TicketsPath {
		ex.route = TicketsPath
		s.serveTicket(w, r, p)
		return
	}
	if rt == nil {
		s.writeProblem(w, r, notRouted(r, allow))
		return
	}
	if !sn.policy.Allowed(p, rt) {
		s.refuseAuth(w, r, forbidden(p, r, sn.policy.Roles(rt)))
		return
	}
	ex.principal = sn.policy.Grant(p, rt) // the one role the service receives
	if ep := sn.endpoints[rt]; ep.Stream {
		ex.ep, ex.upstream = ep, rt.Upstream
		s.serveStream(w, r, ep)
		return
	}
	release := s.holdCaller(w, r, p)
	if release == nil {
		return
	}
	defer release()
	hold, full := sn.shed.admit(r, rt)
	if full != nil {
		s.writeProblem(w, r, sn.shed.overloaded(full, ex.traceID))
		return
	}
	defer hold.release()
	ep := sn.endpoints[rt]
	ex.ep, ex.route, ex.upstream = ep, rt.Template, rt.Upstream
	ex.inFlight = s.metrics.InFlight(rt.Template)
	fwd, cancel, prob := s.prepare(w, r, ep)
	if prob != nil {
		s.writeProblem(w, r, prob)
		return
	}
	defer cancel()
	s.startCapture(ex, r)
	sn.direct.serve(sn.mux, w, fwd, rt)
	if ex.stale != nil {
		s.keepCopy(w, ex)
	}
}

func forbidden(p auth.Principal, r *http.Request, roles []string) *problem.Problem {
	who := "No role of the caller"
	if len(p.Roles) == 1 {
		who = "Role " + p.Role
	}
	need := "no role may call it"
	if len(roles) > 0 {
		need = "it needs one of: " + strings.Join(roles, ", ")
	}
	return problem.New(problem.CodeForbidden, who+" may not "+r.Method+" "+r.URL.EscapedPath()+"; "+need+".")
}

func notRouted(r *http.Request, allow []string) *problem.Problem {
	if len(allow) == 0 {
		return problem.New(problem.CodeRouteNotFound, "No route matches "+r.URL.EscapedPath()+".")
	}
	p := problem.New(problem.CodeMethodNotAllowed, r.Method+" is not allowed on "+r.URL.EscapedPath()+".")
	p.Allow = allow
	return p
}
