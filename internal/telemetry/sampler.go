package telemetry

import (
	"sync/atomic"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// sampler decides by parent, then by trace id (see the package doc).
// Provider.Apply swaps its rule; without one (nothing exported) it drops
// every span.
type sampler struct {
	rule atomic.Pointer[sdktrace.Sampler]
	edge bool
}

// setRatio makes the rule OpenTelemetry's parent-based sampler with ratio
// for new traces, recording what it drops (kept if it ends in error, see
// keepErrors). The edge also decides by ratio for a caller whose flag says
// unsampled, so a client that samples nothing still gets the edge's share
// traced; a sampled caller is followed everywhere (W3C Trace Context's
// sampled flag), so a consumer's own sampled trace keeps the gateway's part.
func (s *sampler) setRatio(ratio float64) {
	r := sdktrace.TraceIDRatioBased(ratio)
	var opts []sdktrace.ParentBasedSamplerOption
	if s.edge {
		opts = append(opts, sdktrace.WithRemoteParentNotSampled(r))
	}
	rule := sdktrace.AlwaysRecord(sdktrace.ParentBased(r, opts...))
	s.rule.Store(&rule)
}

// dropAll makes the sampler drop every span (nothing is exported).
func (s *sampler) dropAll() { s.rule.Store(nil) }

// dropsAll reports whether the sampler drops every span.
func (s *sampler) dropsAll() bool { return s.rule.Load() == nil }

func (s *sampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	rule := s.rule.Load()
	if rule == nil {
		psc := trace.SpanContextFromContext(p.ParentContext)
		return sdktrace.SamplingResult{Decision: sdktrace.Drop, Tracestate: psc.TraceState()}
	}
	return (*rule).ShouldSample(p)
}

func (s *sampler) Description() string {
	rule := "NeverSample"
	if r := s.rule.Load(); r != nil {
		rule = (*r).Description()
	}
	if s.edge {
		return "PorticoEdge{" + rule + "}"
	}
	return "Portico{" + rule + "}"
}

// keepErrors passes on sampled spans, and spans the sampler only recorded
// when they end with status Error, marked sampled so the exporter takes
// them.
type keepErrors struct{ sdktrace.SpanProcessor }

func (k keepErrors) OnEnd(s sdktrace.ReadOnlySpan) {
	switch {
	case s.SpanContext().IsSampled():
		k.SpanProcessor.OnEnd(s)
	case s.Status().Code == codes.Error:
		k.SpanProcessor.OnEnd(keptSpan{s})
	}
}

// keptSpan is an unsampled span with status Error, shown as sampled.
type keptSpan struct{ sdktrace.ReadOnlySpan }

func (k keptSpan) SpanContext() trace.SpanContext {
	sc := k.ReadOnlySpan.SpanContext()
	return sc.WithTraceFlags(sc.TraceFlags().WithSampled(true))
}
