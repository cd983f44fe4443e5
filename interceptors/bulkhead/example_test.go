package bulkhead_test

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/bulkhead"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func ExampleUnaryClientInterceptor() {
	ic := bulkhead.UnaryClientInterceptor(
		bulkhead.WithUpstream("inventory"),
		bulkhead.WithLimits(1, -1, 0), // one call at a time, no queue
	)
	inner := func(ctx context.Context, method string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		// While this call holds the only slot, another one is refused.
		err := ic(ctx, method, nil, nil, nil, func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			return nil
		})
		info := rpcerr.ErrorInfo(err)
		fmt.Println("second call:", status.Code(err), info.GetReason(), info.GetMetadata()["upstream"])
		return nil
	}
	err := ic(context.Background(), "/portico.inventory.v1.InventoryService/GetItem", nil, nil, nil, inner)
	fmt.Println("first call:", status.Code(err))
	// Output:
	// second call: Unavailable OVERLOADED inventory
	// first call: OK
}
