package interceptors_test

import (
	"context"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
)

// TestUpstreamState: State shows the instances, the calls in flight (one
// while a call is held at the upstream, none after) and the breaker with
// its counts, opening after its consecutive failures.
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
	st := up.State()
	if st.InFlight != 0 || len(st.Breakers) != 1 || st.Breakers[0].Name != "inventory" || st.Breakers[0].State != "open" {
		t.Fatalf("State() after two failures = %+v, want nothing in flight and the breaker open", st)
	}
	// The open breaker's counts restart at zero; its last trip keeps the
	// closed window that opened it: the held call's success, two failures.
	b := st.Breakers[0]
	want := breaker.Counts{Requests: 3, TotalSuccesses: 1, TotalFailures: 2, ConsecutiveFailures: 2}
	if b.Counts != (breaker.Counts{}) || b.LastTrip == nil || b.LastTrip.Counts != want || b.LastTrip.At.IsZero() {
		t.Errorf("open breaker = %+v (last trip %+v), want zero counts and a last trip with %+v", b, b.LastTrip, want)
	}
}
