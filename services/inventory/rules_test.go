package inventory

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/grpctest"
	"github.com/portico-gateway/portico/internal/protocheck/protochecktest"
)

// TestEveryMethodChecksItsRules: every RPC of the service, as an admin,
// refuses a request whose strings are all oversized with INVALID_ARGUMENT
// naming them, never echoing them.
func TestEveryMethodChecksItsRules(t *testing.T) {
	f := newFixture(t, "", testItems())
	srv := grpc.NewServer()
	inventoryv1.RegisterInventoryServiceServer(srv, f.svc)
	protochecktest.Oversized(t, grpctest.Serve(t, srv), inventoryv1.InventoryService_ServiceDesc.ServiceName,
		func(t *testing.T) context.Context { return as(t, callmeta.RoleAdmin) })
}
