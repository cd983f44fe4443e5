package retry_test

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	_ "github.com/portico-gateway/portico/gen/portico/inventory/v1" // registers the descriptors the policy reads
	"github.com/portico-gateway/portico/interceptors/retry"
)

func ExampleUnaryClientInterceptor() {
	ic := retry.UnaryClientInterceptor(
		retry.WithUpstream("inventory"),
		retry.WithMaxAttempts(3), // attempts in total: one call, at most two retries
		retry.WithBackoff(time.Millisecond, 5*time.Millisecond),
	)
	flaky := func(fails int) grpc.UnaryInvoker {
		attempt := 0
		return func(_ context.Context, method string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
			attempt++
			fmt.Println("attempt", attempt, method)
			if attempt <= fails {
				return status.Error(codes.Unavailable, "instance restarting")
			}
			return nil
		}
	}
	// GetItem is NO_SIDE_EFFECTS in inventory.proto: retried.
	err := ic(context.Background(), "/portico.inventory.v1.InventoryService/GetItem", nil, nil, nil, flaky(1))
	fmt.Println("GetItem:", status.Code(err))
	// CreateItem declares no idempotency level: tried once.
	err = ic(context.Background(), "/portico.inventory.v1.InventoryService/CreateItem", nil, nil, nil, flaky(1))
	fmt.Println("CreateItem:", status.Code(err))
	// Output:
	// attempt 1 /portico.inventory.v1.InventoryService/GetItem
	// attempt 2 /portico.inventory.v1.InventoryService/GetItem
	// GetItem: OK
	// attempt 1 /portico.inventory.v1.InventoryService/CreateItem
	// CreateItem: Unavailable
}
