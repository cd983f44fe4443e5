package order

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/protocheck/protochecktest"
)

// TestEveryMethodChecksItsRules: every RPC of the service, as an admin
// with an idempotency key, refuses a request whose strings are all
// oversized with INVALID_ARGUMENT naming them, never echoing them.
func TestEveryMethodChecksItsRules(t *testing.T) {
	h := newHarness(t)
	conn, _ := serve(t, func(s *grpc.Server) { orderv1.RegisterOrderServiceServer(s, h.svc) })
	protochecktest.Oversized(t, conn, orderv1.OrderService_ServiceDesc.ServiceName,
		func(t *testing.T) context.Context { return as(t, "root", "admin", "guard-key") })
}
