package traceid

import (
	"context"
	"net"
	"testing"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"
)

// seen is what a callee's trace layer made of one call: FromIncoming's id
// and the x-trace-id entries that arrived.
type seen struct {
	id   string
	keys []string
}

// serveSeen serves gRPC health on bufconn behind a server interceptor that
// reports each call's FromIncoming and x-trace-id, and returns a client
// connection whose calls pass through, in order, client.
func serveSeen(t *testing.T, client ...grpc.UnaryClientInterceptor) (*grpc.ClientConn, <-chan seen) {
	t.Helper()
	lis := bufconn.Listen(1 << 16)
	got := make(chan seen, 1)
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		got <- seen{id: FromIncoming(ctx), keys: metadata.ValueFromIncomingContext(ctx, Key)}
		return h(ctx, req)
	}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(client...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn, got
}

// bothIDs is Outgoing as it was before x-trace-id became conditional: it
// always sent x-trace-id beside the traceparent.
func bothIDs(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	ctx = Outgoing(ctx)
	if len(metadata.ValueFromOutgoingContext(ctx, Key)) == 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, Key, FromContext(ctx))
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// replaceTraceparent stands for the OpenTelemetry stats handler, which
// replaces the traceparent with its attempt span's: here of another trace.
func replaceTraceparent(tp string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		md, _ := metadata.FromOutgoingContext(ctx)
		md.Set(TraceparentKey, tp)
		return invoker(metadata.NewOutgoingContext(ctx, md), method, req, reply, cc, opts...)
	}
}

// TestOutgoingCalleeEquivalence: through a real gRPC server, the callee's
// FromIncoming gives the same id whether x-trace-id is sent beside every
// traceparent (bothIDs) or only when the id is not the traceparent's
// trace-id (Outgoing), for every kind of id and span; and x-trace-id
// arrives exactly for ids whose trace-id is derived (readable ones).
func TestOutgoingCalleeEquivalence(t *testing.T) {
	const hexID = "4bf92f3577b34da6a3ce929d0e0e4736"
	other := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	spanOf := func(id string, flags trace.TraceFlags) trace.SpanContext {
		tid, _ := trace.TraceIDFromHex(TraceID(id))
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags})
	}
	otherSpan := spanOf("0af7651916cd43dd8448eb211c80319c", trace.FlagsSampled)
	ids := []struct {
		name     string
		id       string
		wantKeys bool // x-trace-id on the wire
	}{
		{"hex id", hexID, false},
		{"readable id", "trace-demo-2026", true},
		{"upper-case hex id", "4BF92F3577B34DA6A3CE929D0E0E4736", true},
		{"all-zero hex id", "00000000000000000000000000000000", true},
	}
	spans := []struct {
		name   string
		span   func(id string) trace.SpanContext
		stored bool // NewSpanContext rather than NewContext
	}{
		{"no span", func(string) trace.SpanContext { return trace.SpanContext{} }, false},
		{"sampled span", func(id string) trace.SpanContext { return spanOf(id, trace.FlagsSampled) }, false},
		{"unsampled span", func(id string) trace.SpanContext { return spanOf(id, 0) }, false},
		{"stored unsampled span", func(id string) trace.SpanContext { return spanOf(id, 0) }, true},
		{"span of another trace", func(string) trace.SpanContext { return otherSpan }, false},
	}
	for _, replaced := range []bool{false, true} {
		var after []grpc.UnaryClientInterceptor
		name := "own traceparent"
		if replaced {
			after, name = []grpc.UnaryClientInterceptor{replaceTraceparent(other)}, "traceparent replaced"
		}
		oldConn, oldSeen := serveSeen(t, append([]grpc.UnaryClientInterceptor{bothIDs}, after...)...)
		newConn, newSeen := serveSeen(t, append([]grpc.UnaryClientInterceptor{UnaryClientInterceptor()}, after...)...)
		for _, id := range ids {
			for _, sp := range spans {
				t.Run(name+"/"+id.name+"/"+sp.name, func(t *testing.T) {
					sc := sp.span(id.id)
					ctx := trace.ContextWithSpanContext(context.Background(), sc)
					if sp.stored {
						ctx, _, _ = NewSpanContext(ctx, id.id, sc)
					} else {
						ctx = NewContext(ctx, id.id)
					}
					was, now := call(t, ctx, oldConn, oldSeen), call(t, ctx, newConn, newSeen)
					if was.id != now.id {
						t.Errorf("callee's FromIncoming = %q, was %q with x-trace-id always sent", now.id, was.id)
					}
					if len(was.keys) != 1 {
						t.Errorf("reference sent x-trace-id %q, want one", was.keys)
					}
					if got := len(now.keys) == 1 && now.keys[0] == id.id; got != id.wantKeys || len(now.keys) > 1 {
						t.Errorf("x-trace-id on the wire = %q, want it: %v", now.keys, id.wantKeys)
					}
				})
			}
		}
	}
}

func call(t *testing.T, ctx context.Context, conn *grpc.ClientConn, got <-chan seen) seen {
	t.Helper()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	return <-got
}
