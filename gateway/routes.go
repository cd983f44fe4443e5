package gateway

import (
	"context"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// registration binds one proto service to the upstream serving it.
type registration struct {
	upstream string                                                                   // an upstreams[].name
	service  string                                                                   // the full proto service name
	register func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error // handlerClient of the generated code
}

// registrations is THE registration list: one line per proto service the
// edge serves. The routes come from the service's google.api.http options.
var registrations = []registration{
	{"inventory", inventoryv1.InventoryService_ServiceDesc.ServiceName,
		handlerClient(inventoryv1.RegisterInventoryServiceHandlerClient, inventoryv1.NewInventoryServiceClient)},
	{"payment", paymentv1.PaymentService_ServiceDesc.ServiceName,
		handlerClient(paymentv1.RegisterPaymentServiceHandlerClient, paymentv1.NewPaymentServiceClient)},
	{"order", orderv1.OrderService_ServiceDesc.ServiceName,
		handlerClient(orderv1.RegisterOrderServiceHandlerClient, orderv1.NewOrderServiceClient)},
}

// handlerClient registers a service's generated handlers on a client of
// any connection, not only a *grpc.ClientConn as RegisterXxxHandler
// takes: the edge calls through captureConn.
func handlerClient[C any](register func(context.Context, *runtime.ServeMux, C) error, client func(grpc.ClientConnInterface) C) func(context.Context, *runtime.ServeMux, grpc.ClientConnInterface) error {
	return func(ctx context.Context, mux *runtime.ServeMux, cc grpc.ClientConnInterface) error {
		return register(ctx, mux, client(cc))
	}
}

// Services are the full names of the proto services the edge calls, one
// per registration: the grpc_service values of its gRPC client metrics.
func Services() []string {
	out := make([]string, len(registrations))
	for i, reg := range registrations {
		out[i] = reg.service
	}
	return out
}
