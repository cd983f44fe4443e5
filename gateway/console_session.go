package gateway

import (
	"net/http"
	"net/url"

	"github.com/portico-gateway/portico/gateway/console"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// sessionRoutes serves /admin/session: POST signs a browser in to the
// console (the admin role's bearer token opens a session, whose id the
// answer sets as an HttpOnly, SameSite=Strict cookie), DELETE signs it
// out. DELETE is open: ending a session needs no credential, and a
// cross-site page cannot send one (SameSite=Strict; DELETE is not a
// simple request and the admin listener answers no CORS preflight).
func (s *Server) sessionRoutes() map[string]adminRoute {
	return map[string]adminRoute{"/admin/session": {http.MethodPost + " " + http.MethodDelete, true, s.adminSession}}
}

func (s *Server) adminSession(w http.ResponseWriter, r *http.Request, sn *snapshot) {
	secure := r.TLS != nil
	console.SessionBound(w.Header())
	if r.Method == http.MethodDelete {
		s.endConsoleSession(r)
		console.ClearCookie(w, secure)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !s.adminAuthenticate(&exchangeFrom(r.Context()).rw, r, sn) {
		return
	}
	cred := r.Header.Get("Authorization")
	if cred == "" { // signed with signature headers: nothing to check again on each use
		s.writeProblem(w, r, problem.New(problem.CodeInvalidArgument,
			"A console session is opened with a bearer token (Authorization: Bearer); signed requests cannot open one."))
		return
	}
	s.endConsoleSession(r) // signing in again replaces the browser's session
	id, sess := s.consoleSessions.Create(cred, exchangeFrom(r.Context()).principal.Subject)
	console.SetCookie(w, id, sess, secure)
	w.WriteHeader(http.StatusNoContent)
}

// consoleSession reports whether r carries a live console session whose
// credential still authenticates as role admin under sn's authenticator:
// a token a reload removed, or one that expired, ends the session here.
func (s *Server) consoleSession(r *http.Request, sn *snapshot) bool {
	c, err := r.Cookie(console.Cookie)
	if err != nil {
		return false
	}
	sess, ok := s.consoleSessions.Get(c.Value)
	if !ok {
		return false
	}
	check := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/admin/session"}, Host: r.Host,
		Header: http.Header{"Authorization": {sess.Credential}}, RemoteAddr: r.RemoteAddr}
	p, err := sn.auth.Authenticate(check.WithContext(r.Context()))
	if err != nil || !p.HasRole(callmeta.RoleAdmin) {
		s.consoleSessions.Delete(c.Value)
		return false
	}
	exchangeFrom(r.Context()).principal = p
	return true
}

// endConsoleSession ends the session r's cookie names, if any.
func (s *Server) endConsoleSession(r *http.Request) {
	if c, err := r.Cookie(console.Cookie); err == nil {
		s.consoleSessions.Delete(c.Value)
	}
}
