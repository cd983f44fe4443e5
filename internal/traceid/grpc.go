package traceid

import (
	"context"
	"encoding/hex"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// FromIncoming returns the trace id of an incoming gRPC call, chosen from
// its first x-trace-id and traceparent entries by Choose, else the trace
// id of the call's span (OpenTelemetry), else a new id.
func FromIncoming(ctx context.Context) string {
	if id, ok := Choose(first(ctx, Key), first(ctx, TraceparentKey)); ok {
		return id
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return New()
}

func first(ctx context.Context, key string) string {
	if vs := metadata.ValueFromIncomingContext(ctx, key); len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// Outgoing returns ctx with the trace id of ctx (if any) appended to the
// outgoing metadata as traceparent and, for a readable id, x-trace-id: the
// traceparent of the context's span when it has one, so the callee
// continues the trace (on a connection with the OpenTelemetry stats
// handler, that handler's traceparent for the attempt's own span replaces
// it). It appends every time: a connection has one trace layer (the client
// chain's first), and a second one would show as a second traceparent
// rather than be hidden.
//
// x-trace-id goes only when the id is not the traceparent's trace-id (a
// readable id, whose trace-id is derived from it): for a W3C id it would
// repeat the traceparent, and Choose picks a valid traceparent's trace-id
// whatever a W3C x-trace-id beside it says, so the callee's FromIncoming
// is the same without it (TestOutgoingCalleeEquivalence), and every call's
// headers carry one unique 32-byte value fewer to encode (HPACK) and
// decode. Only a hop that drops traceparent and keeps x-trace-id would
// tell the difference; none of Portico's does.
func Outgoing(ctx context.Context) context.Context {
	id, c := fromContext(ctx)
	if id == "" {
		return ctx
	}
	var tp string
	switch sc := trace.SpanContextFromContext(ctx); {
	case c != nil && c.of(sc):
		tp = c.traceparent // NewSpanContext's
	case sc.IsValid() && hexEqual(sc.TraceID(), TraceID(id)):
		tp = spanTraceparent(sc)
	default:
		tp = Traceparent(id) // a new parent id: only when there is no span
	}
	if traceparentID(tp) == id {
		return metadata.AppendToOutgoingContext(ctx, TraceparentKey, tp)
	}
	return metadata.AppendToOutgoingContext(ctx, Key, id, TraceparentKey, tp)
}

// hexEqual reports whether hexID is tid in lower-case hex, without
// building tid's string.
func hexEqual(tid trace.TraceID, hexID string) bool {
	var b [2 * len(trace.TraceID{})]byte
	hex.Encode(b[:], tid[:])
	return string(b[:]) == hexID
}

// TraceparentLen is the length of a version 00 traceparent.
const TraceparentLen = 3 + 2*len(trace.TraceID{}) + 1 + 2*len(trace.SpanID{}) + 1 + 2

// AppendTraceparent appends sc's W3C traceparent (version 00) to b:
// "00-" trace-id "-" parent-id "-" trace-flags, with the flags W3C defines
// (sampled, random) as OpenTelemetry's propagator writes them. With
// TraceparentLen bytes of room in b it allocates nothing.
func AppendTraceparent(b []byte, sc trace.SpanContext) []byte {
	tid, sid := sc.TraceID(), sc.SpanID()
	flags := sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom)
	b = append(b, "00-"...)
	b = hex.AppendEncode(b, tid[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, sid[:])
	b = append(b, '-')
	return hex.AppendEncode(b, []byte{byte(flags)})
}

// spanTraceparent is sc's traceparent (AppendTraceparent), built in one
// allocation.
func spanTraceparent(sc trace.SpanContext) string {
	var b [TraceparentLen]byte
	return string(AppendTraceparent(b[:0], sc))
}

// UnaryServerInterceptor puts the caller's trace id (or a new one) in the
// handler's context so logs and onward calls carry it.
func UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(NewContext(ctx, FromIncoming(ctx)), req)
	}
}

// UnaryClientInterceptor forwards the context's trace id to the callee.
func UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(Outgoing(ctx), method, req, reply, cc, opts...)
	}
}
