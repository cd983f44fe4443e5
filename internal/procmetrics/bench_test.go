package procmetrics

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// BenchmarkClientUnary is the client metrics interceptor alone around a
// call that succeeds at once: the per-attempt cost of grpc_client_*.
func BenchmarkClientUnary(b *testing.B) {
	c, err := NewClient(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	unary := c.unary()
	ok := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := unary(ctx, inventoryv1.InventoryService_GetItem_FullMethodName, nil, nil, nil, ok); err != nil {
			b.Fatal(err)
		}
	}
}
