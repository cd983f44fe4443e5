package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/portico-gateway/portico/gateway/config"
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
		atExit = append(atExit, md.Get(traceid.TraceparentKey)...)
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

	if len(atExit) != 1 || !strings.HasPrefix(atExit[0], "00-"+id+"-") {
		t.Errorf("traceparents leaving the chain = %q, want exactly one, of trace %s", atExit, id)
	}
	md, n := h.inv.last()
	if n != 1 {
		t.Fatalf("inventory saw %d calls, want 1", n)
	}
	if got := md.Get(traceid.TraceparentKey); len(got) > 0 {
		t.Errorf("inventory got traceparent %q after the chain's exit stripped it: a trace interceptor runs after the chain", got)
	}
}

// Example_edgeChain prints the layers of the edge's client chain to one
// upstream, outermost first: what NewUpstream installs, and nothing else.
func Example_edgeChain() {
	up := config.UpstreamConfig{Name: "inventory", Addresses: []string{"10.0.0.7:43101", "10.0.0.8:43101"}}
	layers, err := interceptors.Layers(interceptors.WithConfig(up.Chain()),
		interceptors.WithLogger(slog.New(slog.DiscardHandler)))
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

// TestEdgeDeadlineIsTheRoutes checks the edge's client chain adds no
// deadline of its own: the upstream sees the route's deadline, longer than
// the 30s a chain timeout used to cut every call to, or the client's
// shorter Grpc-Timeout.
func TestEdgeDeadlineIsTheRoutes(t *testing.T) {
	h := newHarness(t, setup{})
	left := make(chan time.Duration, 1)
	h.inv.getItem = func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		dl, _ := ctx.Deadline()
		left <- time.Until(dl)
		return &inventoryv1.Item{Sku: "kb-1"}, nil
	}
	cfg := h.cfg
	cfg.Routes.Overrides = map[string]config.RouteOverride{
		"portico.inventory.v1.InventoryService/GetItem": {Timeout: 45 * time.Second, MaxTimeout: time.Minute},
	}
	cfg.ShutdownGrace = time.Minute // a drain must not cut the route (config.Config.Check)
	ups := NewUpstreams(interceptors.WithLogger(slog.New(slog.DiscardHandler)))
	defer ups.Close()
	srv, err := New(context.Background(), cfg, WithDialer(ups.Dialer()), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	edge := httptest.NewServer(srv.Handler())
	defer edge.Close()

	tests := []struct {
		name        string
		grpcTimeout string
		above, upTo time.Duration // the upstream's time left is in (above, upTo]
	}{
		{"route deadline", "", 30 * time.Second, 45 * time.Second},
		{"client asks for less", "2S", 0, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", edge.URL+"/api/inventory/kb-1", nil)
			req.Header.Set("Authorization", "Bearer "+readerToken)
			if tt.grpcTimeout != "" {
				req.Header.Set("Grpc-Timeout", tt.grpcTimeout)
			}
			resp, err := edge.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET = %d, want 200", resp.StatusCode)
			}
			if got := <-left; got <= tt.above || got > tt.upTo {
				t.Errorf("upstream had %v left, want (%v, %v]", got, tt.above, tt.upTo)
			}
		})
	}
}
