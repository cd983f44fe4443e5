package interceptors_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
)

// TestWithoutRetries counts the attempts an upstream answering UNAVAILABLE
// sees for one idempotent call: the default chain retries, WithoutRetries
// tries once.
func TestWithoutRetries(t *testing.T) {
	tests := []struct {
		name string
		opts []interceptors.Option
		want int32
	}{
		{"default", nil, 3},
		{"without retries", []interceptors.Option{interceptors.WithoutRetries()}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			target, dial := stub.Serve(t, &stub.Inventory{GetItemFunc: func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
				calls.Add(1)
				return nil, status.Error(codes.Unavailable, "down")
			}}, nil)
			opts := append([]interceptors.Option{
				interceptors.WithUpstream("inventory"),
				interceptors.WithLogger(slog.New(slog.DiscardHandler)),
				interceptors.WithDialOptions(dial),
				// A budget that never refuses a retry.
				interceptors.WithRetryBudget(1, 1e9, 100),
			}, tt.opts...)
			conn, err := interceptors.Dial(target, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_, err = inventoryv1.NewInventoryServiceClient(conn).GetItem(context.Background(), &inventoryv1.GetItemRequest{Sku: "kb-1"})
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("GetItem = %v, want UNAVAILABLE", err)
			}
			if got := calls.Load(); got != tt.want {
				t.Errorf("upstream saw %d attempts, want %d", got, tt.want)
			}
		})
	}
}
