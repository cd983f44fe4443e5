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
	upstream string                                                           // an upstreams[].name
	service  string                                                           // the full proto service name
	register func(context.Context, *runtime.ServeMux, *grpc.ClientConn) error // generated RegisterXxxHandler
}

// registrations is THE registration list: one line per proto service the
// edge serves. The routes come from the service's google.api.http options.
var registrations = []registration{
	{"inventory", inventoryv1.InventoryService_ServiceDesc.ServiceName, inventoryv1.RegisterInventoryServiceHandler},
	{"payment", paymentv1.PaymentService_ServiceDesc.ServiceName, paymentv1.RegisterPaymentServiceHandler},
	{"order", orderv1.OrderService_ServiceDesc.ServiceName, orderv1.RegisterOrderServiceHandler},
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

// behaviour is what the edge adds to one RPC beyond forwarding it.
type behaviour struct {
	// location is the Location template of a 201 Created answer; {field}
	// is a field path of the response message.
	location string
	// idempotencyKey: the Idempotency-Key header is required and forwarded
	// as "idempotency-key" metadata.
	idempotencyKey bool
	// respondAsync: the RPC honours Prefer: respond-async (RFC 7240;
	// portico.api.v1.Edge.respond_async, async.go).
	respondAsync bool
}

// behaviours are keyed by full RPC name. Creates answer 201 + Location
// (RFC 9110 section 15.3.2), also when replayed.
var behaviours = map[string]behaviour{
	"/portico.order.v1.OrderService/CreateOrder":          {location: "/api/orders/{id}", idempotencyKey: true, respondAsync: true},
	"/portico.inventory.v1.InventoryService/CreateItem":   {location: "/api/inventory/{sku}"},
	"/portico.inventory.v1.InventoryService/ReserveStock": {location: "/api/reservations/{id}"},
	"/portico.payment.v1.PaymentService/CreatePayment":    {location: "/api/payments/{id}", idempotencyKey: true},
}
