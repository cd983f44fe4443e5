package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/internal/traceid"
)

// TestEdgeChainTracesOnce proves the edge's client runs the trace
// interceptor once per call, as the chain's first layer: an interceptor
// placed after the whole chain sees the trace headers once and strips
// them, and the upstream then receives none, so nothing after the chain
// (such as a trace interceptor among the dial options) adds them again.
func TestEdgeChainTracesOnce(t *testing.T) {
	h := newHarness(t, setup{})
	up := h.cfg.Upstreams[0] // inventory, served by the harness
	var mu sync.Mutex
	var atExit []string
	strip := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		md, _ := metadata.FromOutgoingContext(ctx)
		mu.Lock()
		atExit = append(atExit, md.Get(traceid.Key)...)
		mu.Unlock()
		md = md.Copy()
		delete(md, traceid.Key)
		delete(md, traceid.TraceparentKey)
		return invoker(metadata.NewOutgoingContext(ctx, md), method, req, reply, cc, opts...)
	}
	u, err := NewUpstream(up, interceptors.WithLogger(slog.New(slog.DiscardHandler)),
		interceptors.WithDialOptions(grpc.WithChainUnaryInterceptor(strip)))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	id := traceid.New()
	ctx := traceid.NewContext(context.Background(), id)
	_, _ = inventoryv1.NewInventoryServiceClient(u.Conn()).GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "kb-1"})

	if fmt.Sprint(atExit) != fmt.Sprint([]string{id}) {
		t.Errorf("trace ids leaving the chain = %q, want exactly [%s]", atExit, id)
	}
	md, n := h.inv.last()
	if n != 1 {
		t.Fatalf("inventory saw %d calls, want 1", n)
	}
	if got := md.Get(traceid.Key); len(got) > 0 {
		t.Errorf("inventory got x-trace-id %q after the chain's exit stripped it: a trace interceptor runs after the chain", got)
	}
}

// Example_edgeChain prints the layers of the edge's client chain to one
// upstream, outermost first: what NewUpstream installs, and nothing else.
func Example_edgeChain() {
	up := UpstreamConfig{Name: "inventory", Addresses: []string{"10.0.0.7:43101", "10.0.0.8:43101"}}
	layers, err := interceptors.Layers(append(interceptors.Options(up.Chain()),
		interceptors.WithLogger(slog.New(slog.DiscardHandler)))...)
	if err != nil {
		panic(err)
	}
	for _, l := range layers {
		fmt.Print(l.Name, " -> ")
	}
	fmt.Println("network")
	// Output:
	// trace -> deadline -> bulkhead -> breaker -> retry -> eject -> network
}
