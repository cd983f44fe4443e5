package gateway

import (
	"context"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/internal/telemetry"
	"github.com/portico-gateway/portico/internal/traceid"
)

// traceHeader carries the trace id on every request and response.
const traceHeader = "X-Trace-Id"

// tracestateKey is the W3C tracestate header.
const tracestateKey = "tracestate"

// The W3C headers' canonical names, as http.Header stores them: a lookup
// by the lower-case name canonicalises it into a new string each time.
const (
	traceparentHeader = "Traceparent"
	tracestateHeader  = "Tracestate"
)

// requestTraceID is the trace id of a request answered without a span (a
// shed refusal, the admin API): traceid.Choose's pick of a single
// X-Trace-Id and a single traceparent, else a new id.
func requestTraceID(r *http.Request) string {
	if id, ok := traceid.Choose(single(r, traceHeader), single(r, traceparentHeader)); ok {
		return id
	}
	return traceid.New()
}

// startSpan starts the request's server span and returns it with the
// request's trace id, chosen by traceid.Choose from a single X-Trace-Id and
// a single W3C traceparent: a valid traceparent wins (W3C Trace Context:
// the caller's trace continues, tracestate with it, but the edge decides
// whether to sample, whatever its flag says), then a valid X-Trace-Id
// (the span's trace id is derived from it, traceid.TraceID), else the
// span's new trace id. An invalid header is ignored, never echoed, so a
// header cannot inject log lines. ctx carries the span, the id and the
// span's traceparent, also returned for the response
// (traceid.NewSpanContext: formatted once for the response and every
// upstream call).
func (s *Server) startSpan(r *http.Request) (ctx context.Context, span trace.Span, id, traceparent string) {
	ctx = r.Context()
	tp := single(r, traceparentHeader)
	id, ok := traceid.Choose(single(r, traceHeader), tp)
	if _, valid := traceid.ParseTraceparent(tp); valid {
		ctx = telemetry.Propagator().Extract(ctx, &requestCarrier{tp, single(r, tracestateHeader)})
	}
	if ok && !trace.SpanContextFromContext(ctx).IsValid() {
		// No traceparent, or one the propagator refused: the span
		// still carries the id the response names.
		tid, _ := trace.TraceIDFromHex(traceid.TraceID(id))
		ctx = telemetry.WithTraceID(ctx, tid)
	}
	ctx, span = s.tracer.Start(ctx, r.Method, serverSpan...)
	if !ok && !span.SpanContext().IsValid() {
		id = traceid.New() // a tracer that mints no ids
	}
	ctx, id, traceparent = traceid.NewSpanContext(ctx, id, span.SpanContext())
	return ctx, span, id, traceparent
}

// requestCarrier hands the propagator a request's single traceparent and
// tracestate: a propagation.MapCarrier without building a map.
type requestCarrier struct{ traceparent, tracestate string }

var _ propagation.TextMapCarrier = (*requestCarrier)(nil)

func (c *requestCarrier) Get(key string) string {
	switch key {
	case traceid.TraceparentKey:
		return c.traceparent
	case tracestateKey:
		return c.tracestate
	}
	return ""
}

func (c *requestCarrier) Set(string, string) {}

func (c *requestCarrier) Keys() []string {
	if c.tracestate == "" {
		return []string{traceid.TraceparentKey}
	}
	return []string{traceid.TraceparentKey, tracestateKey}
}

// serverSpan starts the edge's spans; built once, as the options are
// only read.
var serverSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// setTraceHeaders writes the request's trace id and the W3C Trace Context
// of the edge's span sc on the response, as propagation.TraceContext
// would: traceparent (formatted once for the response and the upstream
// calls: traceid.NewSpanContext) and tracestate when sc has one. The id
// and traceparent values share one backing array.
func setTraceHeaders(h http.Header, id, traceparent string, sc trace.SpanContext) {
	if traceparent == "" {
		h[traceHeader] = []string{id}
		return
	}
	vs := []string{id, traceparent}
	h[traceHeader], h[traceparentHeader] = vs[:1:1], vs[1:]
	if ts := sc.TraceState().String(); ts != "" {
		h[tracestateHeader] = []string{ts}
	}
}

// endSpan names the span after the route and records the answer: a 5xx
// is an error; the problem code, and the resilience decisions behind it
// (breaker open, bulkhead full, rate limited) as events.
//
// A span the sampler only recorded (not sampled) is exported only if it
// ends in error (telemetry's keepErrors), so below a 5xx it ends bare:
// its name and attributes would be built for nothing.
func endSpan(span trace.Span, r *http.Request, ex *exchange, status int) {
	if !span.IsRecording() || !span.SpanContext().IsSampled() && status < 500 {
		span.End()
		return
	}
	span.SetName(r.Method + " " + ex.route)
	span.SetAttributes(
		attribute.String("http.request.method", r.Method),
		attribute.String("http.route", ex.route),
		attribute.Int("http.response.status_code", status),
		attribute.String("portico.upstream", ex.upstream),
	)
	if ex.code != "" {
		span.SetAttributes(attribute.String("portico.problem.code", ex.code))
		if decision[ex.code] {
			span.AddEvent(ex.code)
		}
	}
	if ex.principal.Subject != "" {
		span.SetAttributes(attribute.String("enduser.id", ex.principal.Subject))
	}
	if status >= 500 {
		span.SetStatus(codes.Error, strconv.Itoa(status)+" "+ex.code)
	}
	span.End()
}

// decision are the problem codes that report a resilience decision rather
// than an upstream's answer; the edge span gets one event for each.
var decision = map[string]bool{
	problem.CodeCircuitOpen: true, problem.CodeOverloaded: true,
	problem.CodeRateLimitExceeded: true, problem.CodeCallerBanned: true, "RETRY_BUDGET_EXHAUSTED": true,
}

// single returns the header's value when it was sent exactly once.
func single(r *http.Request, key string) string {
	if vs := r.Header.Values(key); len(vs) == 1 {
		return vs[0]
	}
	return ""
}
