package order

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// countingStore counts a Store's Update calls.
type countingStore struct {
	Store
	updates atomic.Int32
}

func (c *countingStore) Update(ctx context.Context, r *Record, from orderv1.Order_Status) error {
	c.updates.Add(1)
	return c.Store.Update(ctx, r, from)
}

// countUpdates serves a second Service on h's store, counting its
// updates, and points h.client at it.
func (h *harness) countUpdates() *countingStore {
	h.t.Helper()
	c := &countingStore{Store: h.store}
	svc, err := New(c, inventoryv1.NewInventoryServiceClient(h.invConn), paymentv1.NewPaymentServiceClient(h.payConn), h.opts...)
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	conn, _ := serve(h.t, func(s *grpc.Server) { orderv1.RegisterOrderServiceServer(s, svc) })
	h.client = orderv1.NewOrderServiceClient(conn)
	return c
}

// TestSagaStoresPaymentWithNextWrite: a run stores the order once after
// the reservation and once when it stops, the payment id going with that
// last write, whether the order settles or stays PENDING.
func TestSagaStoresPaymentWithNextWrite(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(h *harness)
		wantStatus orderv1.Order_Status
	}{
		{name: "confirmed", wantStatus: orderv1.Order_STATUS_CONFIRMED},
		{name: "commit outcome unknown", setup: commitAnswers(status.Error(codes.Unavailable, "down")),
			wantStatus: orderv1.Order_STATUS_PENDING},
		{name: "commit refused", setup: commitAnswers(status.Error(codes.PermissionDenied, "no")),
			wantStatus: orderv1.Order_STATUS_FAILED},
		{name: "commit refused, refund unknown", setup: func(h *harness) {
			commitAnswers(status.Error(codes.PermissionDenied, "no"))(h)
			h.payStub.set(func(k *payHooks) {
				k.refund = func(context.Context, *paymentv1.RefundPaymentRequest) (*paymentv1.Payment, error) {
					return nil, status.Error(codes.Unavailable, "down")
				}
			})
		}, wantStatus: orderv1.Order_STATUS_PENDING},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t)
				if tt.setup != nil {
					tt.setup(h)
				}
				c := h.countUpdates()
				_, _ = h.client.CreateOrder(alice(t, "k1"), orderReq("pm_card_ok", "keyboard-001", 1))
				recs := h.stored()
				if len(recs) != 1 {
					t.Fatalf("stored orders = %d, want 1", len(recs))
				}
				o := recs[0].Order
				pays, err := h.pay.ListPayments(context.Background(), &paymentv1.ListPaymentsRequest{OrderId: o.GetId()})
				if err != nil || len(pays.GetPayments()) != 1 {
					t.Fatalf("payments of %s = %v, %v; want one", o.GetId(), pays, err)
				}
				if o.GetStatus() != tt.wantStatus || o.GetReservationId() == "" || o.GetPaymentId() != pays.GetPayments()[0].GetId() {
					t.Errorf("stored %v, reservation %q, payment %q; want %v with the reservation and payment %q",
						o.GetStatus(), o.GetReservationId(), o.GetPaymentId(), tt.wantStatus, pays.GetPayments()[0].GetId())
				}
				if n := c.updates.Load(); n != 2 {
					t.Errorf("updates = %d, want 2 (the reservation, then the payment with the outcome)", n)
				}
			})
		})
	}
}
