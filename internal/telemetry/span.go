package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of Portico's own spans.
const Scope = "github.com/portico-gateway/portico"

// Start starts a child span of the span in ctx, from the same provider
// (so code below a traced call needs no wiring); under no span it is a
// no-op span. Close it with End.
func Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return trace.SpanFromContext(ctx).TracerProvider().Tracer(Scope).Start(ctx, name, opts...)
}

// StartRoot starts a span from p (nil: none), for work no request started
// (a reconciler round).
func StartRoot(ctx context.Context, p *Provider, name string) (context.Context, trace.Span) {
	if p == nil {
		return Start(ctx, name)
	}
	return p.tp.Tracer(Scope).Start(ctx, name)
}

// End records err (if any) on span, with status Error, and ends it.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
