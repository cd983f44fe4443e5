package order

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func TestCancelOrder(t *testing.T) {
	down := func(ctx context.Context) error { return unavailableErr(ctx) }
	tests := []struct {
		name       string
		subject    string
		role       string
		setup      func(h *harness)
		wantCode   codes.Code
		wantReason string
		wantStatus orderv1.Order_Status // stored afterwards
		wantRefund int
	}{
		{name: "owner", subject: "alice", role: "customer", wantStatus: orderv1.Order_STATUS_CANCELLED, wantRefund: 1},
		{name: "admin", subject: "root", role: "admin", wantStatus: orderv1.Order_STATUS_CANCELLED, wantRefund: 1},
		{name: "other customer", subject: "bob", role: "customer", wantCode: codes.NotFound, wantReason: reasonOrderNotFound,
			wantStatus: orderv1.Order_STATUS_CONFIRMED},
		{name: "reader", subject: "audit", role: "reader", wantCode: codes.PermissionDenied, wantReason: reasonPermissionDenied,
			wantStatus: orderv1.Order_STATUS_CONFIRMED},
		{name: "payment unavailable", subject: "alice", role: "customer",
			setup: func(h *harness) {
				h.payStub.set(func(k *payHooks) {
					k.refund = func(ctx context.Context, _ *paymentv1.RefundPaymentRequest) (*paymentv1.Payment, error) {
						return nil, down(ctx)
					}
				})
			},
			wantCode: codes.Unavailable, wantReason: reasonPaymentUnavailable, wantStatus: orderv1.Order_STATUS_CONFIRMED},
		{name: "inventory unavailable", subject: "alice", role: "customer",
			setup:    func(h *harness) { h.stopInventory() },
			wantCode: codes.Unavailable, wantReason: reasonInventoryUnavailable, wantStatus: orderv1.Order_STATUS_CONFIRMED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			o, err := h.client.CreateOrder(alice(t, "k1"), orderReq("pm_card_ok", "keyboard-001", 2))
			if err != nil {
				t.Fatalf("CreateOrder: %v", err)
			}
			if tt.setup != nil {
				tt.setup(h)
			}
			_, err = h.client.CancelOrder(as(t, tt.subject, tt.role, ""), &orderv1.CancelOrderRequest{Id: o.GetId()})
			if status.Code(err) != tt.wantCode || rpcerr.Reason(err) != tt.wantReason {
				t.Fatalf("CancelOrder() as %s = %v; want %v %q", tt.subject, err, tt.wantCode, tt.wantReason)
			}
			if tt.wantCode == codes.Unavailable && retryInfo(err) == nil {
				t.Errorf("UNAVAILABLE without RetryInfo")
			}
			// The committed stock stays sold; a restock is an admin action.
			checkStored(t, h, h.get(o.GetId()), tt.wantStatus, "", inventoryv1.Reservation_STATE_COMMITTED, 1, tt.wantRefund)
		})
	}
}

func TestCancelOrderIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		o, err := h.client.CreateOrder(alice(t, "k1"), orderReq("pm_card_ok", "keyboard-001", 1))
		if err != nil {
			t.Fatalf("CreateOrder: %v", err)
		}
		time.Sleep(1)
		first, err := h.client.CancelOrder(alice(t, ""), &orderv1.CancelOrderRequest{Id: o.GetId()})
		if err != nil || first.GetStatus() != orderv1.Order_STATUS_CANCELLED {
			t.Fatalf("CancelOrder() = %v, %v; want CANCELLED", first.GetStatus(), err)
		}
		if !first.GetUpdateTime().AsTime().Equal(time.Now()) {
			t.Errorf("update_time = %v, want %v", first.GetUpdateTime().AsTime(), time.Now())
		}
		time.Sleep(1)
		again, err := h.client.CancelOrder(alice(t, ""), &orderv1.CancelOrderRequest{Id: o.GetId()})
		if err != nil {
			t.Fatalf("second CancelOrder: %v", err)
		}
		if diff := cmp.Diff(first, again, protocmp.Transform()); diff != "" {
			t.Errorf("second CancelOrder() changed the order (-first +second):\n%s", diff)
		}
		if n := h.payStub.refunds.Load(); n != 1 {
			t.Errorf("RefundPayment calls = %d, want 1", n)
		}
	})
}

func TestCancelOrderNotCancellable(t *testing.T) {
	tests := []struct {
		name      string
		order     func(t *testing.T, h *harness) string
		wantRetry bool
	}{
		{"failed", func(t *testing.T, h *harness) string {
			_, err := h.client.CreateOrder(alice(t, "k1"), orderReq("pm_card_declined", "keyboard-001", 1))
			return rpcerr.ErrorInfo(err).GetMetadata()[MetaOrderID]
		}, false},
		{"pending", func(t *testing.T, h *harness) string { return pendingOrder(t, h, "pm_card_ok").GetId() }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			id := tt.order(t, h)
			before := h.get(id)
			_, err := h.client.CancelOrder(alice(t, ""), &orderv1.CancelOrderRequest{Id: id})
			if status.Code(err) != codes.FailedPrecondition || rpcerr.Reason(err) != reasonNotCancellable {
				t.Fatalf("CancelOrder(%s) = %v; want FAILED_PRECONDITION %s", tt.name, err, reasonNotCancellable)
			}
			if got := retryInfo(err) != nil; got != tt.wantRetry {
				t.Errorf("RetryInfo present = %v, want %v", got, tt.wantRetry)
			}
			if diff := cmp.Diff(before.Order, h.get(id).Order, protocmp.Transform()); diff != "" {
				t.Errorf("refused cancel changed the order (-before +after):\n%s", diff)
			}
		})
	}
}
