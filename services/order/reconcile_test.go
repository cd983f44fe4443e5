package order

import (
	"context"
	"testing"
	"time"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// chargeThenHang captures the payment and then never answers: the charge
// happened but the order service cannot know.
func chargeThenHang(h *harness) func(*payHooks) {
	return func(k *payHooks) {
		k.create = func(ctx context.Context, r *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
			if _, err := h.pay.CreatePayment(ctx, r); err != nil {
				return nil, err
			}
			return nil, blockUntilDone(ctx)
		}
	}
}

// pendingOrder creates an order whose charge times out and returns it
// PENDING; afterwards the payment service answers normally again.
func pendingOrder(t *testing.T, h *harness, method string) *orderv1.Order {
	t.Helper()
	h.payStub.set(chargeThenHang(h))
	o, err := h.client.CreateOrder(asWithin(t, 300*time.Millisecond, "alice", "customer", "k1"), orderReq(method, "keyboard-001", 1))
	if err != nil || o.GetStatus() != orderv1.Order_STATUS_PENDING {
		t.Fatalf("CreateOrder with a hanging charge = %v, %v; want PENDING and no error", o.GetStatus(), err)
	}
	h.payStub.set(func(k *payHooks) { k.create = h.pay.CreatePayment })
	return o
}

func TestReconcile(t *testing.T) {
	tests := []struct {
		name        string
		file        bool // use a database file
		method      string
		between     func(t *testing.T, h *harness, o *orderv1.Order) // after PENDING, before Reconcile
		advance     time.Duration
		wantSettled int
		wantStatus  orderv1.Order_Status
		wantFail    string
		wantRes     inventoryv1.Reservation_State
		wantRefund  int
	}{{
		name: "payment timeout then confirmed", method: "pm_card_ok", advance: 6 * time.Second,
		wantSettled: 1, wantStatus: orderv1.Order_STATUS_CONFIRMED, wantRes: inventoryv1.Reservation_STATE_COMMITTED,
	}, {
		name: "too young to reconcile", method: "pm_card_ok", advance: 4 * time.Second,
		wantStatus: orderv1.Order_STATUS_PENDING, wantRes: inventoryv1.Reservation_STATE_ACTIVE,
	}, {
		name: "restart then confirmed", file: true, method: "pm_card_ok", advance: 6 * time.Second,
		between:     func(t *testing.T, h *harness, _ *orderv1.Order) { h.restart() },
		wantSettled: 1, wantStatus: orderv1.Order_STATUS_CONFIRMED, wantRes: inventoryv1.Reservation_STATE_COMMITTED,
	}, {
		name: "payment still down", method: "pm_card_ok", advance: 6 * time.Second,
		between: func(t *testing.T, h *harness, _ *orderv1.Order) {
			h.payStub.set(func(k *payHooks) {
				k.create = func(ctx context.Context, _ *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
					return nil, unavailableErr(ctx)
				}
			})
		},
		wantStatus: orderv1.Order_STATUS_PENDING, wantRes: inventoryv1.Reservation_STATE_ACTIVE,
	}, {
		name: "inventory down", method: "pm_card_ok", advance: 6 * time.Second,
		between: func(t *testing.T, h *harness, _ *orderv1.Order) { h.stopInventory() },
		// The reconciler leaves it PENDING; it never withdraws an order it
		// already answered.
		wantStatus: orderv1.Order_STATUS_PENDING, wantRes: inventoryv1.Reservation_STATE_ACTIVE,
	}, {
		name: "declined charge is compensated", method: "pm_card_declined", advance: 6 * time.Second,
		wantSettled: 1, wantStatus: orderv1.Order_STATUS_FAILED, wantFail: FailurePaymentDeclined,
		wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		name: "reservation expired meanwhile", method: "pm_card_ok", advance: 6 * time.Second,
		between:     func(t *testing.T, h *harness, o *orderv1.Order) { h.inv.expire(o.GetId()) },
		wantSettled: 1, wantStatus: orderv1.Order_STATUS_FAILED, wantFail: FailureReservationExpired,
		wantRes: inventoryv1.Reservation_STATE_RELEASED, wantRefund: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.file {
				h = newHarnessFile(t)
			}
			o := pendingOrder(t, h, tt.method)
			if tt.between != nil {
				tt.between(t, h, o)
			}
			h.clock.Advance(tt.advance)
			n, err := h.svc.Reconcile(context.Background())
			if err != nil || n != tt.wantSettled {
				t.Fatalf("Reconcile() = %d, %v; want %d, nil", n, err, tt.wantSettled)
			}
			charges := 0
			if tt.method == "pm_card_ok" {
				charges = 1 // the lost answer was a capture; never a second one
			}
			checkStored(t, h, h.get(o.GetId()), tt.wantStatus, tt.wantFail, tt.wantRes, charges, tt.wantRefund)
			if n, err := h.svc.Reconcile(context.Background()); n != 0 || err != nil {
				t.Errorf("second Reconcile() = %d, %v; want 0, nil", n, err)
			}
		})
	}
}

// TestReconcileAfterCrash: a process died right after storing the order,
// before any call; after a restart the reconciler runs the whole saga.
func TestReconcileAfterCrash(t *testing.T) {
	h := newHarnessFile(t)
	rec := h.svc.newRecord("alice", "k1", orderReq("pm_card_ok", "keyboard-001", 3))
	if prev, err := h.store.Create(context.Background(), rec); err != nil || prev != nil {
		t.Fatalf("store.Create = %v, %v", prev, err)
	}
	h.restart()
	h.clock.Advance(10 * time.Second)
	if n, err := h.svc.Reconcile(context.Background()); n != 1 || err != nil {
		t.Fatalf("Reconcile() = %d, %v; want 1, nil", n, err)
	}
	got := h.get(rec.Order.GetId())
	checkStored(t, h, got, orderv1.Order_STATUS_CONFIRMED, "", inventoryv1.Reservation_STATE_COMMITTED, 1, 0)
	if got.Order.GetTotal().GetAmountMinor() != 3*4999 {
		t.Errorf("total = %v, want %d", got.Order.GetTotal(), 3*4999)
	}
	if !got.Order.GetUpdateTime().AsTime().Equal(h.clock.Now()) {
		t.Errorf("update_time = %v, want the clock %v", got.Order.GetUpdateTime().AsTime(), h.clock.Now())
	}
}

// TestReconcileSkipsRunningSaga: an order this process is driving is left
// to that run.
func TestReconcileSkipsRunningSaga(t *testing.T) {
	h := newHarness(t)
	entered, unblock := make(chan struct{}), make(chan struct{})
	h.invStub.set(func(k *invHooks) {
		k.reserve = func(ctx context.Context, r *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
			close(entered)
			<-unblock
			return h.inv.ReserveStock(ctx, r)
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := h.client.CreateOrder(alice(t, "k1"), orderReq("pm_card_ok", "keyboard-001", 1))
		done <- err
	}()
	<-entered
	h.clock.Advance(time.Minute)
	n, err := h.svc.Reconcile(context.Background())
	close(unblock)
	if n != 0 || err != nil {
		t.Errorf("Reconcile() during the saga = %d, %v; want 0, nil", n, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("CreateOrder: %v", err)
	}
	if got := h.invStub.reserves.Load(); got != 1 {
		t.Errorf("ReserveStock calls = %d, want 1 (the reconciler kept off)", got)
	}
}
