package interceptors_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
)

// TestWithoutResilience: a connection built WithoutResilience has the
// trace layer only; every call reaches the upstream once, however many
// fail (no retry, no breaker), and an instance that reports NOT_SERVING
// is still reached although the Config turns health checking on.
func TestWithoutResilience(t *testing.T) {
	cfg := interceptors.Config{Name: "inventory", Addresses: []string{"10.0.0.1:1"},
		HealthCheck: interceptors.HealthCheckConfig{Enabled: new(true)}}
	layers, err := interceptors.Layers(interceptors.WithConfig(cfg), interceptors.WithoutResilience(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range layers {
		names = append(names, l.Name)
	}
	if want := []string{interceptors.LayerTrace}; !slices.Equal(names, want) {
		t.Errorf("Layers(WithoutResilience) = %v, want %v", names, want)
	}

	net := stub.NewNetwork()
	var calls atomic.Int32
	hs := net.Serve(t, "10.0.0.1:1", &stub.Inventory{GetItemFunc: func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		calls.Add(1)
		return nil, status.Error(codes.Unavailable, "down")
	}}, nil)
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	conn, err := interceptors.Dial("", interceptors.WithConfig(cfg), interceptors.WithoutResilience(),
		interceptors.WithDialOptions(net.DialOption()), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := inventoryv1.NewInventoryServiceClient(conn)
	for i := range 5 {
		if _, err := c.GetItem(ctx, &inventoryv1.GetItemRequest{}); status.Code(err) != codes.Unavailable {
			t.Fatalf("call %d = %v, want the upstream's UNAVAILABLE", i+1, err)
		}
	}
	if n := calls.Load(); n != 5 {
		t.Errorf("upstream saw %d calls, want 5: one per call, none refused", n)
	}
}
