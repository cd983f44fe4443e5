package deadline_test

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/deadline"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func ExampleUnaryClientInterceptor() {
	ic := deadline.UnaryClientInterceptor(
		deadline.WithUpstream("inventory"),
		deadline.WithTimeout(240*time.Millisecond),
		deadline.WithMinBudget(10*time.Millisecond),
	)
	// The caller has 5ms left: not worth a trip to the inventory service.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	err := ic(ctx, "/portico.inventory.v1.InventoryService/GetItem", nil, nil, nil,
		func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			fmt.Println("never called")
			return nil
		})
	info := rpcerr.ErrorInfo(err)
	fmt.Println(status.Code(err), info.GetReason(), info.GetMetadata()["upstream"])
	// Output: DeadlineExceeded DEADLINE_BUDGET_EXHAUSTED inventory
}
