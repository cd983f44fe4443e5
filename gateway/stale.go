package gateway

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/etag"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/protoopt"
	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/gateway/stale"
	apiv1 "github.com/portico-gateway/portico/gen/portico/api/v1"
)

// Stale-if-error (RFC 5861): a GET route whose RPC carries the
// (portico.api.v1.edge) stale_if_error option, or whose
// routes.overrides entry turns it on, keeps its last 200 answer per key;
// when the upstream then fails (502 unreachable, 503 unavailable or
// circuit open or overloaded, 504 timeout) and the copy is younger than
// the route's max_stale, the edge answers the copy with Age (RFC 9111
// section 5.1) and Cache-Status (RFC 9211) instead of the problem. Any
// other answer (4xx, 500, an older copy, none) is the usual problem. A
// HEAD runs the GET route: it is answered a copy as the GET would be
// (headers, no body) but never keeps one.
//
// The key holds everything the answer's authorisation and content
// depended on. The edge forwards nothing of a request but the message
// bound from its path, query and body (a GET has none) and the caller's
// identity (subject and the one role the policy granted, setPrincipal),
// so the key is the route, that message marshalled deterministically
// (staleKey), the granted role and, for a per-caller route, the tenant
// and subject. A copy is served only after
// the request passed authentication and the policy like any other, so
// it never reaches a caller the route refuses; a public route's copy
// goes to callers holding the same granted role, which is all the
// upstream saw of who asked.

// Scopes of StaleOverride.Scope.
const (
	scopeCaller = config.ScopeCaller
	scopePublic = config.ScopePublic
)

// staleRule is a GET route's permission to answer a kept copy.
type staleRule struct {
	maxStale time.Duration
	public   bool
}

// staleRuleOf resolves r's rule from its RPC's option and o (zero: no
// override); nil means no stale answers on r.
func staleRuleOf(r *route.Route, o config.StaleOverride) (*staleRule, error) {
	var rule *staleRule
	if r.Desc != nil {
		if s := protoopt.Edge(r.Desc).GetStaleIfError(); s != nil {
			rule = &staleRule{maxStale: s.GetMaxStale().AsDuration(), public: s.GetScope() == apiv1.StaleIfError_SCOPE_PUBLIC}
		}
	}
	switch {
	case o.MaxStale < 0:
		return nil, nil
	case o.MaxStale > 0 && rule == nil:
		rule = &staleRule{maxStale: o.MaxStale}
	case o.MaxStale > 0:
		rule.maxStale = o.MaxStale
	}
	if rule != nil && o.Scope != "" {
		rule.public = o.Scope == scopePublic
	}
	if rule == nil || rule.maxStale <= 0 {
		return nil, nil
	}
	if r.Method != http.MethodGet {
		return nil, fmt.Errorf("stale_if_error is for GET routes only, not %s", r.Key())
	}
	rule.maxStale = min(rule.maxStale, config.MaxStaleAge)
	return rule, nil
}

// staleCapture is one GET's answer being recorded for keeping.
type staleCapture struct {
	// msg is the request message the upstream call was given, recorded
	// by captureConn before the connection's chain runs (so also when a
	// breaker or bulkhead refuses the call); nil when grpc-gateway
	// answered before calling (a 400), which keeps and answers no copy.
	msg   proto.Message
	rule  *staleRule
	body  []byte
	limit int64 // the largest body the LRU keeps
	large bool  // over limit: not kept
	// served: the answer is a copy (serveStale), never kept again as
	// new, which would reset its Age.
	served bool
	// head: a HEAD, which runs the GET route and may be answered its copy
	// but never keeps one (only a GET's whole body is kept).
	head bool
}

// staleKey is the key of the answers to msg, the request message the
// upstream gets, for caller p: the route, msg marshalled
// deterministically, the granted role and, on a per-caller route, the
// tenant and subject. Keying by the message, not the URL, makes every
// spelling of one request (an escaped path byte, the query's order, an
// empty or zero parameter) one copy: a client cannot multiply the copies
// by respelling a URL, nor miss the copy another spelling kept.
func staleKey(ep *endpoint, msg proto.Message, p auth.Principal) (stale.Key, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return stale.Key{}, err
	}
	if ep.stale.public {
		return stale.NewKey(scopePublic, ep.Key(), string(b), p.Role), nil
	}
	return stale.NewKey(scopeCaller, ep.Key(), string(b), p.Role, p.Tenant, p.Subject), nil
}

// startCapture prepares the keeping of r's answer, when its route keeps
// copies; it sets ex.stale, which handleError also reads. It does only
// what every request needs: the key is worked out later, from the message
// the upstream call is given (captureConn records it), and only when a
// copy is kept (a 200) or looked for (an upstream failure), so the
// request is bound once, by grpc-gateway, not a second time here. A HEAD
// (the route table gives it the GET route) reads copies as its GET would
// but keeps none.
func (s *Server) startCapture(ex *exchange, r *http.Request) {
	head := r.Method == http.MethodHead
	if ex.ep.stale == nil || (r.Method != http.MethodGet && !head) || s.copies.max() <= 0 {
		return
	}
	ex.stale = &staleCapture{rule: ex.ep.stale, limit: s.copies.max() / 4, head: head}
	ex.staleAccept = stale.ParseAccept(r.Header)
}

// key is the copy's key (staleKey) for the message the call was given;
// ok is false when there was no call (grpc-gateway refused the request
// before making it) or the message does not marshal (a call that never
// reached the upstream).
func (c *staleCapture) key(ex *exchange) (_ stale.Key, ok bool) {
	if c.msg == nil {
		return stale.Key{}, false
	}
	k, err := staleKey(ex.ep, c.msg, ex.principal)
	return k, err == nil
}

// record appends b, part of a 200 answer's body, to the capture.
func (c *staleCapture) record(b []byte) {
	if c.large || c.head {
		return
	}
	if int64(len(c.body)+len(b)) > c.limit {
		c.large, c.body = true, nil
		return
	}
	c.body = append(c.body, b...)
}

// keepCopy keeps the answer just written, when it was a whole 200.
func (s *Server) keepCopy(w *responseWriter, ex *exchange) {
	c := ex.stale
	if w.status != http.StatusOK || c.large || c.served || c.head || ex.staleAccept.NoStore {
		return
	}
	key, ok := c.key(ex)
	if !ok {
		return
	}
	body := c.body
	if cap(body)-len(body) > len(body)/8 {
		// append's doubling left up to half the array unused (the answer
		// came in several writes); a copy keeps only what Size counts.
		body = bytes.Clone(body)
	}
	cp := stale.Copy{Stored: time.Now(), ContentType: w.Header().Get("Content-Type"), ETag: w.Header().Get("ETag"), Body: body}
	if s.copies.lru.Put(key, cp) && ex.snap.staleShared != nil {
		ex.snap.staleShared.shared.Offer(key, cp, c.rule.maxStale)
	}
}

// serveStale answers the kept copy instead of p, when p is an upstream
// failure, the route keeps copies, the client accepts a stale answer and
// a copy young enough exists here or in Redis. It reports whether it
// answered.
func (s *Server) serveStale(w http.ResponseWriter, r *http.Request, ex *exchange, p *problem.Problem) bool {
	c := ex.stale
	reason := staleReason(p)
	if c == nil || reason == "" || ex.byClient || ex.staleAccept.Refused {
		return false
	}
	key, ok := c.key(ex)
	if !ok {
		return false
	}
	cp, ok := s.copies.lru.Get(key)
	if !ok && ex.snap.staleShared != nil {
		cp, ok, _ = ex.snap.staleShared.shared.Get(r.Context(), key) // Redis failing: a miss
	}
	if !ok {
		return false
	}
	age := max(time.Since(cp.Stored), 0)
	if age > c.rule.maxStale || !ex.staleAccept.Allows(age) {
		return false
	}
	h := w.Header()
	h.Set("Age", strconv.FormatInt(int64(age/time.Second), 10))
	// RFC 9211: the request went forward (fwd) because the kept answer was
	// stale, and the answer is that copy; detail says why the fresh one
	// failed. Not "hit": that would say the request was never forwarded.
	h.Set("Cache-Status", "Portico; fwd=stale; detail="+reason)
	ex.logErr = "answered a copy " + strconv.FormatInt(int64(age/time.Second), 10) + "s old: " + p.Code + ": " + ex.logErr
	ex.code, c.served = "", true
	s.metrics.StaleAnswer(ex.route, reason)
	if s.answerCondition(w, r, judgeCopy(w, ex, cp)) { // 304 or 412, as a live GET
		return true
	}
	h.Set("Content-Type", cp.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(cp.Body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(cp.Body)
	}
	return true
}

// judgeCopy applies a live GET's conditional rules (judge) to a kept
// copy, on the ETag kept with it: the answer carries that ETag, If-Match
// with no strong match is 412 and a matching If-None-Match 304. A copy
// without a usable tag is answered unconditionally.
func judgeCopy(w http.ResponseWriter, ex *exchange, cp stale.Copy) error {
	kept, err := etag.Parse([]string{cp.ETag})
	if cp.ETag == "" || err != nil || len(kept.Tags) != 1 {
		return nil
	}
	return judgeTag(w, ex, kept.Tags[0])
}

// staleReasons are every value staleReason returns, for the metric's
// zero series.
var staleReasons = []string{"unreachable", "unavailable", "circuit-open", "overloaded", "timeout"}

// staleRoutes are the templates of the routes in eps that keep copies.
func staleRoutes(eps map[*route.Route]*endpoint) []string {
	var out []string
	for rt, ep := range eps {
		if ep.stale != nil {
			out = append(out, rt.Template)
		}
	}
	return out
}

// staleReason names the upstream failure p reports, as Cache-Status's
// detail and the metric's reason; "" when a copy must not replace p.
func staleReason(p *problem.Problem) string {
	switch p.Code {
	case problem.CodeUpstreamUnavailable:
		return "unreachable"
	case problem.CodeCircuitOpen:
		return "circuit-open"
	case problem.CodeUpstreamTimeout:
		return "timeout"
	case problem.CodeOverloaded:
		return "overloaded"
	case problem.CodeMessageTooLarge: // the same call meets the same limit
		return ""
	}
	if p.Status == http.StatusServiceUnavailable { // SERVICE_UNAVAILABLE or a dependency's reason
		return "unavailable"
	}
	return ""
}
