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

// TestSagaStoresOnceWhenItStops: a run stores the order once, when it
// stops: settled, or PENDING with what it learnt (reservation, total and,
// once charged, the payment id).
func TestSagaStoresOnceWhenItStops(t *testing.T) {
	refundDown := func(h *harness) {
		h.payStub.set(func(k *payHooks) {
			k.refund = func(context.Context, *paymentv1.RefundPaymentRequest) (*paymentv1.Payment, error) {
				return nil, status.Error(codes.Unavailable, "down")
			}
		})
	}
	tests := []struct {
		name       string
		setup      func(h *harness)
		wantStatus orderv1.Order_Status
		wantPaid   bool // the payment id is stored
	}{
		{name: "confirmed", wantStatus: orderv1.Order_STATUS_CONFIRMED, wantPaid: true},
		{name: "charge outcome unknown", setup: chargeAnswers(status.Error(codes.Unavailable, "down")),
			wantStatus: orderv1.Order_STATUS_PENDING},
		{name: "commit outcome unknown", setup: commitAnswers(status.Error(codes.Unavailable, "down")),
			wantStatus: orderv1.Order_STATUS_PENDING, wantPaid: true},
		{name: "commit refused", setup: commitAnswers(status.Error(codes.PermissionDenied, "no")),
			wantStatus: orderv1.Order_STATUS_FAILED, wantPaid: true},
		{name: "commit refused, refund unknown", setup: func(h *harness) {
			commitAnswers(status.Error(codes.PermissionDenied, "no"))(h)
			refundDown(h)
		}, wantStatus: orderv1.Order_STATUS_PENDING, wantPaid: true},
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
				if o.GetStatus() != tt.wantStatus || o.GetReservationId() == "" || o.GetTotal().GetAmountMinor() == 0 {
					t.Errorf("stored %v, reservation %q, total %v; want %v with the reservation and total",
						o.GetStatus(), o.GetReservationId(), o.GetTotal(), tt.wantStatus)
				}
				wantPay := ""
				if tt.wantPaid {
					pays, err := h.pay.ListPayments(context.Background(), &paymentv1.ListPaymentsRequest{OrderId: o.GetId()})
					if err != nil || len(pays.GetPayments()) != 1 {
						t.Fatalf("payments of %s = %v, %v; want one", o.GetId(), pays, err)
					}
					wantPay = pays.GetPayments()[0].GetId()
				}
				if o.GetPaymentId() != wantPay {
					t.Errorf("stored payment id %q, want %q", o.GetPaymentId(), wantPay)
				}
				if n := c.updates.Load(); n != 1 {
					t.Errorf("updates = %d, want 1", n)
				}
			})
		})
	}
}
