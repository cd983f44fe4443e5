package telemetry

import (
	"sync/atomic"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// sampler decides by trace id (see the package doc). Provider.Apply
// changes its ratio; without one (nothing exported) it drops every span.
type sampler struct {
	ratio atomic.Pointer[sdktrace.Sampler]
	edge  bool
}

func (s *sampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	psc := trace.SpanContextFromContext(p.ParentContext)
	ratio := s.ratio.Load()
	if ratio == nil {
		return sdktrace.SamplingResult{Decision: sdktrace.Drop, Tracestate: psc.TraceState()}
	}
	var d sdktrace.SamplingDecision
	switch {
	case psc.IsValid() && (!psc.IsRemote() || !s.edge):
		d = sdktrace.Drop
		if psc.IsSampled() {
			d = sdktrace.RecordAndSample
		}
	default:
		d = (*ratio).ShouldSample(p).Decision
	}
	if d == sdktrace.Drop {
		d = sdktrace.RecordOnly // kept if it ends in error (keepErrors)
	}
	return sdktrace.SamplingResult{Decision: d, Tracestate: psc.TraceState()}
}

func (s *sampler) Description() string {
	ratio := "NeverSample"
	if r := s.ratio.Load(); r != nil {
		ratio = (*r).Description()
	}
	if s.edge {
		return "PorticoEdge{" + ratio + "}"
	}
	return "PorticoParentBased{" + ratio + "}"
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
