package order

import (
	"context"

	"google.golang.org/grpc"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// Inventory is the part of portico.inventory.v1.InventoryService the saga
// uses. inventoryv1.NewInventoryServiceClient satisfies it.
type Inventory interface {
	ReserveStock(ctx context.Context, in *inventoryv1.ReserveStockRequest, opts ...grpc.CallOption) (*inventoryv1.Reservation, error)
	CommitReservation(ctx context.Context, in *inventoryv1.CommitReservationRequest, opts ...grpc.CallOption) (*inventoryv1.Reservation, error)
	ReleaseReservation(ctx context.Context, in *inventoryv1.ReleaseReservationRequest, opts ...grpc.CallOption) (*inventoryv1.Reservation, error)
}

// Payments is the part of portico.payment.v1.PaymentService the saga uses.
// paymentv1.NewPaymentServiceClient satisfies it.
type Payments interface {
	CreatePayment(ctx context.Context, in *paymentv1.CreatePaymentRequest, opts ...grpc.CallOption) (*paymentv1.Payment, error)
	RefundPayment(ctx context.Context, in *paymentv1.RefundPaymentRequest, opts ...grpc.CallOption) (*paymentv1.Payment, error)
	ListPayments(ctx context.Context, in *paymentv1.ListPaymentsRequest, opts ...grpc.CallOption) (*paymentv1.ListPaymentsResponse, error)
}

var (
	_ Inventory = inventoryv1.InventoryServiceClient(nil)
	_ Payments  = paymentv1.PaymentServiceClient(nil)
)

// Error domains of the dependencies; a business failure is only trusted
// when its ErrorInfo comes from the service that owns it, not from a client
// interceptor (breaker, bulkhead) on the way.
const (
	inventoryDomain = "inventory.portico.dev"
	paymentDomain   = "payment.portico.dev"
)
