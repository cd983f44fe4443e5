package interceptors_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
)

// TestStreamSetupsFeedInstanceBreakers: with one of three instances
// failing every WatchOrder before its first message, stream setups open
// that instance's breaker (taking it out of the rotation) and leave the
// upstream's breaker and the other instances' closed, as unary attempts
// do; the streams that follow all reach the healthy instances.
func TestStreamSetupsFeedInstanceBreakers(t *testing.T) {
	n := stub.NewNetwork()
	var addrs []string
	for i := range 3 {
		a := fmt.Sprintf("10.0.0.%d:1", i+1)
		addrs = append(addrs, a)
		n.Serve(t, a, &stub.Inventory{GetItemFunc: func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
			return &inventoryv1.Item{Sku: a}, nil
		}}, &stub.Order{WatchOrderFunc: func(_ *orderv1.WatchOrderRequest, st orderv1.OrderService_WatchOrderServer) error {
			if i == 1 {
				return status.Error(codes.Unavailable, a+" is down")
			}
			return st.Send(&orderv1.Order{Id: a})
		}})
	}
	up, err := interceptors.NewUpstream("", interceptors.WithConfig(interceptors.Config{
		Name: "order", Addresses: addrs, Timeout: 3 * time.Second,
		Retry: interceptors.RetryConfig{MaxAttempts: 1},
	}), interceptors.WithBreaker(breaker.Settings{CoolDown: time.Minute}),
		interceptors.WithDialOptions(n.DialOption()), quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	warm(t, inventoryv1.NewInventoryServiceClient(up.Conn()), 3)
	c := orderv1.NewOrderServiceClient(up.Conn())
	watch := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		st, err := c.WatchOrder(ctx, &orderv1.WatchOrderRequest{Id: "o-1"})
		if err != nil {
			return err
		}
		for {
			if _, err := st.Recv(); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}
	failed := 0
	for range 30 {
		if watch() != nil {
			failed++
		}
	}
	want := map[string]string{
		"order": "closed", "order@10.0.0.1:1": "closed",
		"order@10.0.0.2:1": "open", "order@10.0.0.3:1": "closed",
	}
	if got := breakerStates(up); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("breakers = %v, want %v", got, want)
	}
	if failed == 0 || failed > 5 {
		t.Errorf("%d of 30 streams failed, want a few (until the instance's breaker opened)", failed)
	}
	for range 10 {
		if err := watch(); err != nil {
			t.Errorf("WatchOrder after the breaker opened = %v, want the healthy instances", err)
		}
	}
}
