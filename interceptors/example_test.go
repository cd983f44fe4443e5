package interceptors_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
)

// Example_order runs one call through the chain Layers builds (the same one
// Dial installs), printing as each layer is entered and left.
func Example_order() {
	layers, err := interceptors.Layers(
		interceptors.WithUpstream("inventory"),
		interceptors.WithAddresses([]string{"10.0.0.7:43101", "10.0.0.8:43101"}),
		interceptors.WithLogger(slog.New(slog.DiscardHandler)),
	)
	if err != nil {
		panic(err)
	}
	var chain []grpc.UnaryClientInterceptor
	for _, l := range layers {
		chain = append(chain, announce(l))
	}
	// Stand in for the network: answer without dialling.
	chain = append(chain, func(_ context.Context, method string, _, _ any, _ *grpc.ClientConn, _ grpc.UnaryInvoker, _ ...grpc.CallOption) error {
		fmt.Println("      network", method)
		return nil
	})
	conn, err := grpc.NewClient("passthrough:///unused", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(chain...))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	_, err = inventoryv1.NewInventoryServiceClient(conn).GetItem(context.Background(), &inventoryv1.GetItemRequest{Sku: "kb-1"})
	fmt.Println("error:", err)
	// Output:
	// -> trace
	//  -> deadline
	//     deadline: now+1s
	//   -> bulkhead
	//    -> breaker
	//     -> retry
	//      -> eject
	//       network /portico.inventory.v1.InventoryService/GetItem
	//      <- eject
	//     <- retry
	//    <- breaker
	//   <- bulkhead
	//  <- deadline
	// <- trace
	// error: <nil>
}

var depth int

// announce wraps a layer so it prints when the call enters and leaves it.
func announce(l interceptors.Layer) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		indent := fmt.Sprintf("%*s", depth, "")
		depth++
		defer func() { depth-- }()
		fmt.Printf("%s-> %s\n", indent, l.Name)
		next := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
			if l.Name == interceptors.LayerDeadline {
				dl, _ := ctx.Deadline()
				fmt.Printf("%s   deadline: now+%v\n", indent, time.Until(dl).Round(10*time.Millisecond))
			}
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		err := l.Unary(ctx, method, req, reply, cc, next, opts...)
		fmt.Printf("%s<- %s\n", indent, l.Name)
		return err
	}
}
