package payment

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/grpctest"
	"github.com/portico-gateway/portico/internal/protocheck/protochecktest"
)

// TestEveryMethodChecksItsRules: every RPC of the service, with an
// idempotency key, refuses a request whose strings are all oversized with
// INVALID_ARGUMENT naming them, never echoing them.
func TestEveryMethodChecksItsRules(t *testing.T) {
	svc, err := New(newFixture(t, "").store)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	paymentv1.RegisterPaymentServiceServer(srv, svc)
	protochecktest.Oversized(t, grpctest.Serve(t, srv), paymentv1.PaymentService_ServiceDesc.ServiceName,
		func(t *testing.T) context.Context { return keyed(t, "guard-key") })
}
