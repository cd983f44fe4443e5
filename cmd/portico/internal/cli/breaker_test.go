package cli

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// Behaviours of flakyInventory.GetItem.
const (
	answer int32 = iota // at once
	hang                // until the caller's deadline
	fail                // INTERNAL at once
)

// flakyInventory answers GetItem as mode says and counts the calls that
// reach it.
type flakyInventory struct {
	inventoryv1.UnimplementedInventoryServiceServer
	mode  atomic.Int32
	calls atomic.Int64
}

func (f *flakyInventory) GetItem(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	f.calls.Add(1)
	switch f.mode.Load() {
	case hang:
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	case fail:
		return nil, status.Error(codes.Internal, "broken")
	}
	return &inventoryv1.Item{}, nil
}

// serveFlaky serves a flakyInventory (with health) on a loopback port and
// returns it and a dialService client to it with the given timeout.
func serveFlaky(t *testing.T, timeout time.Duration) (*flakyInventory, inventoryv1.InventoryServiceClient) {
	t.Helper()
	inv := &flakyInventory{}
	up, err := dialService("inventory", serveInventory(t, inv), "portico.inventory.v1.InventoryService", timeout, slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	return inv, inventoryv1.NewInventoryServiceClient(up.Conn())
}

// call makes one GetItem call and reports whether it reached the server
// (false: the client refused it, an open breaker).
func call(t *testing.T, inv *flakyInventory, c inventoryv1.InventoryServiceClient) (reached bool, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // longer than the chain's own timeout
	defer cancel()
	before := inv.calls.Load()
	_, err = c.GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "kb-1"})
	return inv.calls.Load() > before, err
}

// TestServiceBreakerIgnoresBurst: a service's client (dialService) keeps
// its breaker closed through a burst of three timeouts, the slow calls of a
// busy host, and opens it on a sustained failure ratio. It opened after two
// timeouts in a row (issue 27.21: a false trip answered most orders
// INVENTORY_UNAVAILABLE).
func TestServiceBreakerIgnoresBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for three real timeouts")
	}
	inv, c := serveFlaky(t, 300*time.Millisecond)
	if _, err := call(t, inv, c); err != nil {
		t.Fatalf("first call: %v", err)
	}
	inv.mode.Store(hang)
	for i := range 3 {
		if _, err := call(t, inv, c); status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("slow call %d = %v, want DEADLINE_EXCEEDED", i+1, err)
		}
	}
	inv.mode.Store(answer)
	if reached, err := call(t, inv, c); !reached || err != nil {
		t.Errorf("call after 3 timeouts: reached the server %v, err %v; want served (breaker closed)", reached, err)
	}
}

// TestServiceBreakerOpensOnRatio: half the calls failing over the window
// opens a service client's breaker once the window holds its minimum of
// calls, and not before.
func TestServiceBreakerOpensOnRatio(t *testing.T) {
	inv, c := serveFlaky(t, 10*time.Second)
	for i := range 2 * serviceBreakerMinCalls {
		inv.mode.Store(answer)
		if i%2 == 1 {
			inv.mode.Store(fail)
		}
		reached, err := call(t, inv, c)
		if reached {
			continue
		}
		if i+1 <= serviceBreakerMinCalls {
			t.Fatalf("call %d refused by the client (%v); want the breaker closed before %d calls", i+1, err, serviceBreakerMinCalls)
		}
		if status.Code(err) != codes.Unavailable {
			t.Errorf("refused call %d = %v, want UNAVAILABLE (CIRCUIT_OPEN)", i+1, err)
		}
		return
	}
	t.Errorf("%d calls, half failing: the breaker never opened", 2*serviceBreakerMinCalls)
}
