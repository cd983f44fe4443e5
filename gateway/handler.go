package gateway

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/portico-gateway/portico/gateway/edgemetrics"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/internal/logging"
)

// serveHTTP is the edge's handler: load shedding, trace id, then the
// operational endpoints, the problem types' pages, the API reference or
// the /api pipeline,
// then one access line and the metrics.
//
// Shedding's cheap refusal comes first, before the snapshot is acquired:
// when a cap is full the refusal is the one answer that must stay cheap
// while the edge's CPU is saturated, and it needs nothing the reference
// protects (the live shedder's limiters and prebuilt answers outlive any
// snapshot that holds them). A request that passes takes its slots later,
// in serveAPI, once its body is read and its caller known, so a slow
// client never holds one.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if sh := s.snap.Load().shed; sh.full(r) != nil {
		sh.refuse(w, r, sh.full(r))
		return
	}
	sn := s.acquire() // the one config this request sees, whatever reloads meanwhile
	defer sn.release(s)
	ex := &exchange{start: time.Now(), route: "unmatched", snap: sn}
	ctx, span, id, traceparent := s.startSpan(r)
	ex.span, ex.traceID = span, id
	r = r.WithContext(withExchange(ctx, ex))
	if r.URL.Path == "" { // CONNECT host:port (authority-form): no path to route, name or log
		u := *r.URL
		u.Path = "/"
		r.URL = &u
	}
	if r.Body != nil && r.Body != http.NoBody {
		ex.counted = countingBody{ReadCloser: r.Body}
		ex.bodyCount = &ex.counted
		r.Body = ex.bodyCount
	}
	rw := &ex.rw
	rw.ResponseWriter, rw.ex = w, ex
	setTraceHeaders(rw.Header(), id, traceparent, span.SpanContext())
	if len(r.TransferEncoding) > 0 || !r.ProtoAtLeast(1, 1) || s.draining.Load() {
		closeAfter(rw)
	}
	defer s.finish(rw, r, ex)
	if max := sn.cfg.HTTP.MaxHeaderBytes; headerSize(r) > max {
		s.writeProblem(rw, r, problem.New(problem.CodeHeadersTooLarge,
			"The request line and headers exceed "+strconv.Itoa(max)+" bytes."))
		return
	}
	if s.handleCORS(rw, r) {
		return
	}
	if h, ok := s.ops[r.URL.Path]; ok {
		ex.route = r.URL.Path
		s.serveOps(rw, r, h)
		return
	}
	if route, ok := isProblemsPath(r.URL.Path); ok {
		ex.route = route
		s.serveOps(rw, r, s.serveProblemPage)
		return
	}
	if route, ok := isDocsPath(r.URL.Path); ok {
		ex.route = route
		s.serveOps(rw, r, s.serveDocs)
		return
	}
	if r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/") {
		// Answers hold a caller's own data (orders, payments) and
		// problems about it: no cache, shared or private, may keep them
		// (RFC 9111 §5.2.2.5).
		rw.Header().Set("Cache-Control", "no-store")
		s.serveAPI(rw, r)
		return
	}
	s.writeProblem(rw, r, problem.New(problem.CodeRouteNotFound, "No route matches "+r.URL.EscapedPath()+"."))
}

// closeAfter makes net/http close the connection after this response.
//
// RFC 9112 section 6.1: a request with Transfer-Encoding may also have
// carried a Content-Length that an intermediary trusted instead (net/http
// drops Content-Length when Transfer-Encoding is present, so the handler
// cannot see the conflict), and whatever follows on the connection may be
// a smuggled request; so the connection is closed after any request that
// arrived with Transfer-Encoding, and after any framing error in a body.
// An HTTP/1.0 message with Transfer-Encoding has faulty framing too (section
// 6.1), but net/http drops the header of HTTP/1.0 requests and frames the
// body by Content-Length, so the edge cannot tell: it closes after every
// HTTP/1.0 request (keep-alive is rare in HTTP/1.0, one reconnect is cheap).
// HTTP/2 has no Transfer-Encoding and ignores the header. While the edge
// drains, every answer closes its connection too, so clients reconnect
// elsewhere before the listener closes (instead of finding a kept-alive
// connection gone).
func closeAfter(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
}

// headerSize counts the bytes of r's request line and header block the
// way they arrived: net/http reads up to http.Server.MaxHeaderBytes + 4096
// (headerReadLimit: the configured limit plus headerSlack) before it
// answers 431 itself, in plain text, so the edge enforces the configured
// limit here for what gets through, as a problem. The count is
// a lower bound (net/http trims the space around values and moves Host out
// of the header, uncounted here), so a request within the limit is never
// refused.
func headerSize(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + len("  \r\n\r\n")
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(": \r\n") + len(v)
		}
	}
	return n
}

// finish recovers a panic into a 500, then logs and counts the request.
func (s *Server) finish(w *responseWriter, r *http.Request, ex *exchange) {
	if p := recover(); p != nil {
		if p == http.ErrAbortHandler {
			panic(p)
		}
		ex.logErr = fmt.Sprintf("panic: %v\n%s", p, debug.Stack())
		if w.status == 0 {
			s.writeProblem(w, r, problem.New(problem.CodeInternal, "The gateway failed unexpectedly; quote the traceId when reporting this."))
		}
	}
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	d := time.Since(ex.start)
	if ex.inFlight != nil {
		ex.inFlight.Dec()
	}
	a := edgemetrics.Answer{Route: ex.route, Method: r.Method, Upstream: ex.upstream, Status: status, Code: ex.code, Duration: d}
	if sc := ex.span.SpanContext(); sc.IsSampled() {
		a.TraceID = sc.TraceID().String()
	}
	s.metrics.Request(a)
	s.logAccess(r, ex, status, d)
	endSpan(ex.span, r, ex, status)
}

// logAccess writes the one access line of a request. It never logs
// headers, so tokens and cookies cannot leak into logs. A 5xx is an ERROR,
// except a 504 under the client's own shorter Grpc-Timeout: like a 4xx
// (499 for a client that hung up), that is the client's outcome, a WARN;
// and except a probe's 503 (probeDown), an INFO like its 200.
func (s *Server) logAccess(r *http.Request, ex *exchange, status int, d time.Duration) {
	level := slog.LevelInfo
	switch {
	case probeDown(ex.route, status):
	case status == http.StatusGatewayTimeout && ex.byClient:
		level = slog.LevelWarn
	case status >= 500:
		level = slog.LevelError
	case status >= 400, ex.writeErr != nil, ex.stream != nil && ex.stream.end == endError:
		level = slog.LevelWarn
	}
	if logging.DropsRequest(r.Context(), s.log, level, d) { // sampled out: build nothing
		return
	}
	var buf [17]slog.Attr
	attrs := append(buf[:0],
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("route", ex.route),
		slog.Int("status", status),
		slog.String("code", ex.code),
		slog.Float64("durationMs", logging.DurationMs(d)),
		slog.String("upstream", ex.upstream),
		slog.String("client", clientAddr(r)),
		slog.String("userAgent", cap256(r.UserAgent())),
		slog.String("subject", ex.principal.Subject),
		slog.Int64("requestBytes", ex.requestBytes()),
		slog.Int64("responseBytes", ex.respBytes),
	)
	if st := ex.stream; st != nil { // written when the stream ends
		attrs = append(attrs, slog.Int64("streamMessages", st.messages), slog.String("streamEnd", st.end),
			slog.String("streamFraming", st.framing()))
	}
	if ex.logErr != "" {
		attrs = append(attrs, slog.String("error", ex.logErr))
	}
	if ex.writeErr != nil {
		attrs = append(attrs, slog.String("clientGone", ex.writeErr.Error()))
	}
	now := time.Now()
	// The process's own JSON logger gets the same bytes from
	// logging.Direct without slog's handler machinery, most of the line's
	// cost; any other logger (a test's handler) gets a record.
	if logging.Direct(r.Context(), s.log, now, level, "request", attrs) {
		return
	}
	// The record is built here rather than by Logger.LogAttrs, which would
	// walk the stack (runtime.Callers) for a source location that is always
	// this line and that no edge handler prints.
	rec := slog.NewRecord(now, level, "request", 0)
	rec.AddAttrs(attrs...)
	_ = s.log.Handler().Handle(r.Context(), rec)
}

// probeDown reports a health probe's 503 (/health, /healthz/ready): the
// probe answering correctly that an upstream or the edge is not ready, not
// the edge failing a request. Logged at ERROR, every probe of every
// orchestrator during an outage was one ERROR line, burying the errors of
// the calls that did fail (and the breaker's state change lines, which
// report the outage once). At INFO it is one more line like the probe's
// 200s, sampled with them (telemetry.logs.sample_rate), and its metric
// (portico_gateway_requests_total{code="503"}) is unchanged. A probe's
// 500 (a panic) stays an ERROR.
func probeDown(route string, status int) bool {
	return status == http.StatusServiceUnavailable && (route == "/health" || route == "/healthz/ready")
}

// clientAddr is the client's IP address (the connection's peer; a
// forwarded-for header is not trusted here).
func clientAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// cap256 bounds a client-chosen string in the access line.
func cap256(s string) string {
	if len(s) > 256 {
		return strings.ToValidUTF8(s[:256], "") + "…"
	}
	return s
}

// serveOps serves an operational endpoint: GET and HEAD only, no token.
func (s *Server) serveOps(w *responseWriter, r *http.Request, h http.HandlerFunc) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		p := problem.New(problem.CodeMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path+".")
		p.Allow = []string{http.MethodGet, http.MethodHead}
		s.writeProblem(w, r, p)
		return
	}
	h(w, r)
}

// writeProblem completes p with the request's path and trace id, puts its
// type under the live config's problems.type_base, and sends it.
func (s *Server) writeProblem(w http.ResponseWriter, r *http.Request, p *problem.Problem) {
	s.completeProblem(r, p)
	p.Write(w)
}

// completeProblem sets p's instance, trace id and type base, and records
// its code for the access line.
func (s *Server) completeProblem(r *http.Request, p *problem.Problem) {
	ex := exchangeFrom(r.Context())
	p.Instance = r.URL.EscapedPath()
	p.TraceID = ex.traceID
	if ex.snap != nil {
		p.Rebase(ex.snap.cfg.Problems.TypeBase)
	}
	ex.code = p.Code
}
