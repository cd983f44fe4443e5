package gateway

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/bodyrate"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/edgemetrics"
	"github.com/portico-gateway/portico/gateway/problem"
)

// bodyGrace is how long an /api request's body may take to begin before
// http.min_body_rate applies (bodyrate.Rule.Grace): a client sends its body
// right after its headers, or after the edge's 100 Continue.
const bodyGrace = time.Second

// The edge reads an /api request's body whole before the request takes an
// in-flight slot or is authenticated, so that a client that trickles (or
// withholds) its body holds no slot while it waits: the slow-body attack
// that filled the edge's cap with requests naming a known X-App-Id or
// carrying a valid token. Every request's body is read alike, whatever
// its credentials, so the time to answer tells nothing about which app
// ids exist. While its body arrives a request counts against its client
// address's cap (shed.max_in_flight_per_client); once it is authenticated
// it counts against its caller's (shed.max_in_flight_per_caller) until it
// is answered. The edge's and route groups' slots come last, when the edge
// can work on the request.

// readAPIBody reads r's body, at most the largest body any route accepts,
// within http.body_timeout and at http.min_body_rate, and puts it back for
// the rest of the pipeline (a larger body is left for the route's own
// limit to refuse, having read no more than that). It answers itself and
// reports false on a refusal: 429 TOO_MANY_IN_FLIGHT over the client
// address's cap, 408 REQUEST_TIMEOUT for a body too slow (the connection
// is closed), 400 for a body that could not be read.
func (s *Server) readAPIBody(w *responseWriter, r *http.Request) bool {
	ex := w.ex
	if ex.bodyCount == nil { // no body
		return true
	}
	sn := ex.snap
	addr := sn.clients.addr(r)
	if !s.bodies.TryAcquire(addr, sn.cfg.Shed.MaxInFlightPerClient) {
		// Closing spares net/http's reading the unread body (up to 256
		// KiB) before it sends the answer, as slowly as the client likes.
		closeAfter(w)
		s.metrics.InFlightRefused(edgemetrics.CapClient)
		s.writeProblem(w, r, tooManyInFlight(sn, "This client address has "+
			strconv.Itoa(sn.cfg.Shed.MaxInFlightPerClient)+" requests whose bodies are still arriving"))
		return false
	}
	defer s.bodies.Release(addr)
	if r.ContentLength > sn.maxBody {
		return true // no route takes it: 413 follows, unread
	}
	rc := http.NewResponseController(w)
	data, whole, err := bodyrate.Read(r.Body, sn.maxBody, bodyRule(sn.cfg.HTTP), rc.SetReadDeadline)
	switch {
	case errors.Is(err, bodyrate.ErrTooSlow):
		closeAfter(w)
		s.writeProblem(w, r, problem.New(problem.CodeRequestTimeout, "The request body did not arrive within "+
			bodyLimits(sn.cfg.HTTP)+"; send it promptly after the headers."))
		return false
	case err != nil:
		closeAfter(w) // a framing error: what follows cannot be trusted
		s.writeProblem(w, r, problem.New(problem.CodeInvalidArgument, "The request body could not be read."))
		return false
	case !whole: // over every limit: the route's limit refuses it, reading no more
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(data), r.Body))
		return true
	}
	// The body is in hand: lift its deadline, so that the connection's
	// background read (net/http's check that the client is still there)
	// does not end the request while the edge works on it.
	_ = rc.SetReadDeadline(time.Time{})
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
	return true
}

// bodyRule is the body deadline of h (defaults applied): body_timeout,
// never beyond read_timeout, and min_body_rate after bodyGrace.
func bodyRule(h config.HTTPConfig) bodyrate.Rule {
	rule := bodyrate.Rule{Timeout: h.ReadTimeout, MinRate: h.MinBodyRate, Grace: bodyGrace}
	if h.BodyTimeout > 0 {
		rule.Timeout = min(h.BodyTimeout, h.ReadTimeout)
	}
	return rule
}

// bodyLimits says bodyRule(h) in words, for the 408's detail.
func bodyLimits(h config.HTTPConfig) string {
	rule := bodyRule(h)
	out := rule.Timeout.String()
	if rule.MinRate > 0 {
		out += " at " + strconv.FormatInt(rule.MinRate, 10) + " bytes a second or more"
	}
	return out
}

// holdCaller counts r against p's cap (shed.max_in_flight_per_caller) and
// returns its release, or answers 429 TOO_MANY_IN_FLIGHT and returns nil.
// The caller is p's subject within its tenant, as the caller quota keys
// it but without a client id header, which a caller could vary.
func (s *Server) holdCaller(w *responseWriter, r *http.Request, p auth.Principal) func() {
	sn := w.ex.snap
	key := p.Tenant + "/" + p.Subject
	if !s.callers.TryAcquire(key, sn.cfg.Shed.MaxInFlightPerCaller) {
		s.metrics.InFlightRefused(edgemetrics.CapCaller)
		s.writeProblem(w, r, tooManyInFlight(sn, "This caller has "+
			strconv.Itoa(sn.cfg.Shed.MaxInFlightPerCaller)+" requests in flight"))
		return nil
	}
	return func() { s.callers.Release(key) }
}

func tooManyInFlight(sn *snapshot, why string) *problem.Problem {
	p := problem.New(problem.CodeTooManyInFlight, why+", the most the gateway takes at once; wait for some to finish.")
	p.RetryAfter = sn.shed.retryAfter
	return p
}
