package gateway

import (
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/interceptors/identity"
)

// TicketsPath is where an authenticated caller asks for a stream ticket:
// POST {"path": "/api/orders/ord-1:watch"} answers {"ticket", "url",
// "expireTime"}; GET url then opens that stream as the caller, once. A
// browser's EventSource sends no Authorization header, so this is how it
// authenticates (package auth, Tickets).
const TicketsPath = auth.TicketsPath

// ticketLabel derives the tickets' key from the identity keys.
const ticketLabel = "portico stream tickets v1"

// maxTicketRequest bounds the body of POST /api/stream-tickets.
const maxTicketRequest = 4 << 10

// newTicketKey is the process's own ticket key, used without an identity
// section: the tickets of one edge then open streams at that edge only.
func newTicketKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}

// ticketsFor returns the stream tickets of sn: signed with a key derived
// from the identity keys, which every edge of a deployment shares (or the
// process's own key without them), single-use through sn's nonce store
// (shared through Redis with redis.url).
func (s *Server) ticketsFor(sn *snapshot, keys *identity.Keys) *auth.Tickets {
	t := &auth.Tickets{Keys: [][]byte{s.ticketKey}, Nonces: sn.nonces, TTL: sn.cfg.Streams.TicketTTL}
	if keys != nil {
		t.Keys = keys.DeriveEach(ticketLabel)
	}
	return t
}

// authenticate returns the caller of r: by its stream ticket when the
// query has one, else by sn's authenticator.
func (s *Server) authenticate(sn *snapshot, r *http.Request) (auth.Principal, error) {
	if !auth.HasTicket(r.URL.RawQuery) {
		return sn.auth.Authenticate(r)
	}
	p, err := sn.tickets.Load().Authenticate(r)
	if err == nil {
		// The route binds the query without the ticket, and nothing
		// after this step (access line, span, upstream) sees it.
		r.URL.RawQuery = auth.StripTicket(r.URL.RawQuery)
		r.RequestURI = r.URL.RequestURI()
	}
	return p, err
}

// ticketRequest is the body of POST /api/stream-tickets.
type ticketRequest struct {
	// Path is the stream to open, as it will be requested: escaped,
	// without a query.
	Path string `json:"path"`
}

// ticketAnswer is its answer.
type ticketAnswer struct {
	Ticket     string `json:"ticket"`
	URL        string `json:"url"`
	ExpireTime string `json:"expireTime"`
}

// serveTicket answers POST /api/stream-tickets for the authenticated
// caller p: 400 for a body that names no path, 404 when no streaming
// route is at the path, 403 when p may not open it.
func (s *Server) serveTicket(w *responseWriter, r *http.Request, p auth.Principal) {
	sn := w.ex.snap
	if r.Method != http.MethodPost {
		pr := problem.New(problem.CodeMethodNotAllowed, r.Method+" is not allowed on "+TicketsPath+".")
		pr.Allow = []string{http.MethodPost}
		s.writeProblem(w, r, pr)
		return
	}
	var req ticketRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxTicketRequest+1))
	if err != nil || len(body) > maxTicketRequest || json.Unmarshal(body, &req) != nil || !strings.HasPrefix(req.Path, "/api/") {
		s.writeProblem(w, r, problem.New(problem.CodeInvalidArgument, `Send {"path": "/api/..."}: the stream to open, without a query.`))
		return
	}
	u, err := url.Parse(req.Path)
	if err != nil || u.RawQuery != "" || u.Fragment != "" || u.EscapedPath() != req.Path {
		s.writeProblem(w, r, problem.New(problem.CodeInvalidArgument, "The path must be an escaped path without a query."))
		return
	}
	rt, _ := sn.table.Match(http.MethodGet, u.Path)
	if rt == nil || !sn.endpoints[rt].Stream {
		s.writeProblem(w, r, problem.New(problem.CodeRouteNotFound, "No stream is at "+req.Path+"; a ticket opens a stream (GET ...:watch, GET ...:export)."))
		return
	}
	if !sn.policy.Allowed(p, rt) {
		s.refuseAuth(w, r, forbidden(p, &http.Request{Method: http.MethodGet, URL: u}, sn.policy.Roles(rt)))
		return
	}
	tk, exp, err := sn.tickets.Load().Issue(p, req.Path)
	if err != nil {
		s.writeProblem(w, r, problem.New(problem.CodeInternal, "The gateway could not issue a ticket."))
		return
	}
	writeJSON(w, http.StatusOK, ticketAnswer{Ticket: tk, ExpireTime: exp.UTC().Format(time.RFC3339),
		URL: req.Path + "?" + auth.TicketParam + "=" + url.QueryEscape(tk)})
}
