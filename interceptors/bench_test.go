package interceptors_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
	"github.com/portico-gateway/portico/internal/traceid"
)

func insecureCreds() credentials.TransportCredentials { return insecure.NewCredentials() }

func okItem(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	return &inventoryv1.Item{Sku: "kb-1"}, nil
}

func benchGetItem(b *testing.B, conn *grpc.ClientConn) {
	c := inventoryv1.NewInventoryServiceClient(conn)
	req := &inventoryv1.GetItemRequest{Sku: "kb-1"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.GetItem(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlain is grpc-go alone over bufconn: the baseline.
func BenchmarkPlain(b *testing.B) {
	target, dial := stub.Serve(b, &stub.Inventory{GetItemFunc: okItem}, nil)
	conn := grpcPlain(b, target, dial)
	defer conn.Close()
	benchGetItem(b, conn)
}

// BenchmarkPlainDeadline is grpc-go alone with the 240ms deadline the chain
// sets on every call: a deadline costs grpc-go work on both sides (the
// grpc-timeout header, the server's timer), so this is the fair baseline.
func BenchmarkPlainDeadline(b *testing.B) {
	target, dial := stub.Serve(b, &stub.Inventory{GetItemFunc: okItem}, nil)
	conn := grpcPlain(b, target, dial)
	defer conn.Close()
	c := inventoryv1.NewInventoryServiceClient(conn)
	req := &inventoryv1.GetItemRequest{Sku: "kb-1"}
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 240*time.Millisecond)
		if _, err := c.GetItem(ctx, req); err != nil {
			b.Fatal(err)
		}
		cancel()
	}
}

// BenchmarkChain is the same call through the whole chain, happy path.
func BenchmarkChain(b *testing.B) {
	target, dial := stub.Serve(b, &stub.Inventory{GetItemFunc: okItem}, nil)
	conn, err := interceptors.Dial(target, interceptors.WithUpstream("inventory"), interceptors.WithDialOptions(dial), quiet)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	benchGetItem(b, conn)
}

// BenchmarkChainLayers runs only the interceptors, with a no-op invoker:
// the chain's own cost without the transport's noise.
func BenchmarkChainLayers(b *testing.B) {
	benchLayers(b, interceptors.Config{Target: "127.0.0.1:1"})
}

// BenchmarkChainLayersAddresses is BenchmarkChainLayers for an upstream of
// three addresses: the eject layer and the per-instance breakers' checks.
func BenchmarkChainLayersAddresses(b *testing.B) {
	benchLayers(b, interceptors.Config{Addresses: []string{"10.0.0.7:1", "10.0.0.8:1", "10.0.0.9:1"}})
}

// BenchmarkChainLayersTraced is BenchmarkChainLayers for a call whose
// context carries a W3C trace id and its span, as every edge and service
// call does: the trace layer's metadata.
func BenchmarkChainLayersTraced(b *testing.B) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	tid, _ := trace.TraceIDFromHex(id)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}})
	ctx, _, _ := traceid.NewSpanContext(trace.ContextWithSpanContext(context.Background(), sc), id, sc)
	benchLayersCtx(b, ctx, interceptors.Config{Target: "127.0.0.1:1"})
}

func benchLayers(b *testing.B, cfg interceptors.Config) {
	benchLayersCtx(b, context.Background(), cfg)
}

func benchLayersCtx(b *testing.B, ctx context.Context, cfg interceptors.Config) {
	layers, err := interceptors.Layers(interceptors.WithConfig(cfg), interceptors.WithUpstream("inventory"), quiet)
	if err != nil {
		b.Fatal(err)
	}
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	for i := len(layers) - 1; i >= 0; i-- {
		next, l := invoker, layers[i]
		invoker = func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
			return l.Unary(ctx, method, req, reply, cc, next, opts...)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := invoker(ctx, inventoryv1.InventoryService_GetItem_FullMethodName, nil, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChainAddresses is BenchmarkChain for an upstream given as
// addresses: the eject layer adds a grpc.Peer call option per attempt.
func BenchmarkChainAddresses(b *testing.B) {
	net := stub.NewNetwork()
	net.Serve(b, "10.0.0.7:1", &stub.Inventory{GetItemFunc: okItem}, nil)
	conn, err := interceptors.Dial("", interceptors.WithUpstream("inventory"),
		interceptors.WithAddresses([]string{"10.0.0.7:1"}), interceptors.WithDialOptions(net.DialOption()), quiet)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	benchGetItem(b, conn)
}
