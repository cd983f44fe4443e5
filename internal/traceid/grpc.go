package traceid

import (
	"context"

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
// outgoing metadata as x-trace-id and traceparent: the traceparent of the
// context's span when it has one, so the callee continues the trace (on a
// connection with the OpenTelemetry stats handler, that handler's
// traceparent for the attempt's own span replaces it). It appends every time:
// a connection has one trace layer (the client chain's first), and a
// second one would show as a second id rather than be hidden.
func Outgoing(ctx context.Context) context.Context {
	id := FromContext(ctx)
	if id == "" {
		return ctx
	}
	tp := Traceparent(id)
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && sc.TraceID().String() == TraceID(id) {
		tp = "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
	}
	return metadata.AppendToOutgoingContext(ctx, Key, id, TraceparentKey, tp)
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
