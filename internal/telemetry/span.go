package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
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

// Database systems, as OpenTelemetry's db.system.name says them.
const (
	SQLite   = "sqlite"
	Postgres = "postgresql"
)

// StartDB starts the span of one store operation on a database system
// (SQLite or Postgres), the one shape both stores use: named "<system>
// <op>" ("sqlite tx", "postgresql tx create order"), of kind client, with
// the attribute db.system.name. A store adds a "rollback" event when its
// caller's function refuses (not a failure), "retry" when the operation
// runs again, "conflict" when another writer won; the span's status is
// Error only when the database fails (End).
func StartDB(ctx context.Context, system, op string) (context.Context, trace.Span) {
	return Start(ctx, system+" "+op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String(string(semconv.DBSystemNameKey), system)))
}
