package interceptors_test

import (
	"context"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
)

// TestUpstreamState: State shows the instances, the calls in flight (one
// while a call is held at the upstream, none after) and the breaker with
// its counts, the instance's breaker opening after its consecutive
// failures.
func TestUpstreamState(t *testing.T) {
	net := stub.NewNetwork()
	called, release := make(chan struct{}), make(chan struct{})
	var fail atomic.Bool
	net.Serve(t, "10.0.0.1:1", &stub.Inventory{GetItemFunc: func(_ context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		if r.GetSku() == "held" {
			close(called)
			<-release
		}
		if fail.Load() {
			return nil, status.Error(codes.Unavailable, "down")
		}
		return &inventoryv1.Item{Sku: r.GetSku()}, nil
	}}, nil)
	up, err := interceptors.NewUpstream("", interceptors.WithUpstream("inventory"), interceptors.WithMaxAttempts(1),
		interceptors.WithAddresses([]string{"10.0.0.1:1"}), interceptors.WithDialOptions(net.DialOption()), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	c := inventoryv1.NewInventoryServiceClient(up.Conn())
	done := make(chan error, 1)
	go func() {
		_, err := c.GetItem(context.Background(), &inventoryv1.GetItemRequest{Sku: "held"})
		done <- err
	}()
	<-called
	if st := up.State(); st.InFlight != 1 || len(st.Instances) != 1 || st.Instances[0].Addr != "10.0.0.1:1" || st.Instances[0].Ejected {
		t.Errorf("State() with a call held = %+v, want 1 in flight on one live instance", st)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	for range 2 { // breaker.DefaultConsecutiveFailures
		_, _ = c.GetItem(context.Background(), &inventoryv1.GetItemRequest{Sku: "x"})
	}
	// The instance took both failures: its breaker opens, the upstream's
	// stays closed (it counts only calls no instance took).
	st := up.State()
	want := []interceptors.BreakerState{{Name: "inventory", State: "closed"}, {Name: "inventory@10.0.0.1:1", Instance: "10.0.0.1:1", State: "open"}}
	if st.InFlight != 0 || len(st.Breakers) != len(want) {
		t.Fatalf("State() after two failures = %+v, want nothing in flight and breakers %+v", st, want)
	}
	for i, w := range want {
		if got := st.Breakers[i]; got.Name != w.Name || got.Instance != w.Instance || got.State != w.State {
			t.Errorf("State().Breakers[%d] = %+v, want %+v", i, got, w)
		}
	}
}
