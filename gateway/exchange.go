package gateway

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/portico-gateway/portico/gateway/answered"
	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/stale"
)

// exchange is the edge's state for one request, shared by the pipeline,
// grpc-gateway's hooks (through the context), the access log and metrics.
// One request's goroutine writes it; grpc-gateway calls its hooks on that
// same goroutine.
type exchange struct {
	start     time.Time
	snap      *snapshot // the config in effect for this request
	traceID   string
	route     string // metric and log label: template, ops path or "unmatched"
	upstream  string
	ep        *endpoint
	principal auth.Principal
	idemKey   string
	body      []byte // the request body as forwarded, to explain a decoding error
	answered  *answered.Record
	created   bool   // a create answered: 200 becomes 201
	location  string // its Location
	async     bool   // the client prefers respond-async (async.go)
	accepted  bool   // the upstream applied it: 201 becomes 202
	code      string // the problem code answered, for the log
	logErr    string // what went wrong behind a 5xx; logged, never sent
	byClient  bool   // the deadline is the client's Grpc-Timeout, shorter than the route's
	writeErr  error  // the first failed write of the response: the client went away
	// stale records a GET's answer for stale-if-error (stale.go); nil on
	// routes that keep no copies. staleAccept is the client's Cache-Control.
	stale       *staleCapture
	staleAccept stale.Accept

	cond conditions // If-Match, If-None-Match (conditional.go)

	span      trace.Span       // the request's server span
	inFlight  prometheus.Gauge // the route's in-flight count, to Dec when answered; nil before routing
	bodyCount *countingBody    // nil when the request has no body
	respBytes int64            // response body bytes written
	stream    *stream          // a server stream's state; nil for a unary call

	// Held here so that one allocation serves the request's state, its
	// response writer, its body counter and its quotas.
	rw      responseWriter
	counted countingBody
	limits  limitRequest // the rate-limit step's quotas (limits.go)
}

// countingBody counts the request body bytes read, for the access line.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

type exchangeKey struct{}

func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

// exchangeFrom returns the request's exchange; a detached one when the
// context has none, so hooks never have to check.
func exchangeFrom(ctx context.Context) *exchange {
	if ex, ok := ctx.Value(exchangeKey{}).(*exchange); ok {
		return ex
	}
	return &exchange{route: "unmatched"}
}

// responseWriter records the status for logs and metrics and turns the 200
// of a create into 201 with Location.
type responseWriter struct {
	http.ResponseWriter
	ex     *exchange
	status int
}

func (w *responseWriter) WriteHeader(code int) {
	if w.status != 0 || code < 200 {
		return
	}
	if code == http.StatusOK && w.ex.created {
		code = w.ex.createdStatus(w.Header())
		if w.ex.location != "" {
			w.Header().Set("Location", w.ex.location)
		}
	}
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Write sends b. A failed write means the client went away mid-response
// (a closed or reset connection): that is the client's outcome, recorded for
// the access line (WARN), and reported to the writer's caller as written,
// so grpc-gateway does not log it as its own ERROR in plain text.
func (w *responseWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.ex.writeErr != nil {
		return len(b), nil
	}
	if w.ex.stale != nil && w.status == http.StatusOK {
		w.ex.stale.record(b)
	}
	n, err := w.ResponseWriter.Write(b)
	w.ex.respBytes += int64(n)
	if err != nil {
		w.ex.writeErr = err
	}
	return len(b), nil
}

// Unwrap lets http.ResponseController reach the connection.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// requestBytes is the request body bytes read so far.
func (ex *exchange) requestBytes() int64 {
	if ex.bodyCount == nil {
		return 0
	}
	return ex.bodyCount.n
}
