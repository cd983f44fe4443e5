package cli

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/traceid"
)

// seenMD is an inventory that hands the metadata of each call to a channel.
type seenMD struct {
	inventoryv1.UnimplementedInventoryServiceServer
	md chan metadata.MD
}

func (s *seenMD) GetItem(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	s.md <- md
	return &inventoryv1.Item{}, nil
}

// TestServiceChainTracesOnce: a service's client (dialService) sends the
// caller's trace id exactly once, as one traceparent (a W3C id needs no
// x-trace-id beside it). traceid.Outgoing appends every time it runs, so a
// second trace layer anywhere on the connection would show here as two.
func TestServiceChainTracesOnce(t *testing.T) {
	inv := &seenMD{md: make(chan metadata.MD, 1)}
	addr := serveInventory(t, inv)

	up, err := dialService("inventory", addr, "portico.inventory.v1.InventoryService", 10*time.Second, slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	id := traceid.New()
	ctx, cancel := context.WithTimeout(traceid.NewContext(context.Background(), id), 10*time.Second)
	defer cancel()
	if _, err := inventoryv1.NewInventoryServiceClient(up.Conn()).GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "kb-1"}); err != nil {
		t.Fatal(err)
	}
	md := <-inv.md
	if got := md.Get(traceid.Key); len(got) != 0 {
		t.Errorf("x-trace-id = %q, want none beside the traceparent of %s", got, id)
	}
	if got := md.Get(traceid.TraceparentKey); len(got) != 1 || !strings.HasPrefix(got[0], "00-"+id+"-") {
		t.Errorf("traceparent = %q, want exactly one, of trace %s", got, id)
	}
}

// serveInventory serves inv, with health SERVING, on a loopback port until
// t ends, and returns its address.
func serveInventory(t *testing.T, inv inventoryv1.InventoryServiceServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	inventoryv1.RegisterInventoryServiceServer(srv, inv)
	hs := health.NewServer()
	hs.SetServingStatus("portico.inventory.v1.InventoryService", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	return lis.Addr().String()
}
