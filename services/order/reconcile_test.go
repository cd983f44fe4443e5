package order

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// chargeThenLose captures the payment and then answers DEADLINE_EXCEEDED,
// as when the answer is lost on the way: the charge happened but the order
// service cannot know. Unlike a hanging answer it needs no real deadline, so
// a loaded machine cannot turn it into a late answer.
func chargeThenLose(h *harness) func(*payHooks) {
	return func(k *payHooks) {
		k.create = func(ctx context.Context, r *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
			if _, err := h.pay.CreatePayment(ctx, r); err != nil {
				return nil, err
			}
			return nil, status.Error(codes.DeadlineExceeded, "answer lost")
		}
	}
}

// pendingOrder creates an order whose charge outcome stays unknown and
// returns it PENDING; afterwards the payment service answers normally again.
func pendingOrder(t *testing.T, h *harness, method string) *orderv1.Order {
	t.Helper()
	h.payStub.set(chargeThenLose(h))
	o, err := h.client.CreateOrder(alice(t, "k1"), orderReq(method, "keyboard-001", 1))
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
		wantSettled: 1, wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failurePaymentDeclined,
		wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		// A definite refusal is final: the lost capture is refunded, the
		// stock released, and the order no longer comes back every round.
		name: "payment now refuses the charge", method: "pm_card_ok", advance: 6 * time.Second,
		between: func(t *testing.T, h *harness, _ *orderv1.Order) {
			chargeAnswers(payErr(codes.InvalidArgument, "UNKNOWN_PAYMENT_METHOD"))(h)
		},
		wantSettled: 1, wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureInvalidPaymentRequest,
		wantRes: inventoryv1.Reservation_STATE_RELEASED, wantRefund: 1,
	}, {
		name: "inventory now refuses the commit", method: "pm_card_ok", advance: 6 * time.Second,
		between: func(t *testing.T, h *harness, _ *orderv1.Order) {
			commitAnswers(status.Error(codes.PermissionDenied, "no"))(h)
		},
		wantSettled: 1, wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureUpstreamRejected,
		wantRes: inventoryv1.Reservation_STATE_RELEASED, wantRefund: 1,
	}, {
		name: "reservation expired meanwhile", method: "pm_card_ok", advance: 6 * time.Second,
		between:     func(t *testing.T, h *harness, o *orderv1.Order) { h.inv.expire(o.GetId()) },
		wantSettled: 1, wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureReservationExpired,
		wantRes: inventoryv1.Reservation_STATE_RELEASED, wantRefund: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t)
				if tt.file {
					h = newHarnessFile(t)
				}
				o := pendingOrder(t, h, tt.method)
				if tt.between != nil {
					tt.between(t, h, o)
				}
				time.Sleep(tt.advance)
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
		})
	}
}

// TestReconcileAfterCrash: a process died right after storing the order,
// before any call; after a restart the reconciler runs the whole saga.
func TestReconcileAfterCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarnessFile(t)
		rec := h.svc.newRecord("alice", "k1", orderReq("pm_card_ok", "keyboard-001", 3))
		if prev, err := h.store.Create(context.Background(), rec); err != nil || prev != nil {
			t.Fatalf("store.Create = %v, %v", prev, err)
		}
		h.restart()
		time.Sleep(10 * time.Second)
		if n, err := h.svc.Reconcile(context.Background()); n != 1 || err != nil {
			t.Fatalf("Reconcile() = %d, %v; want 1, nil", n, err)
		}
		got := h.get(rec.Order.GetId())
		checkStored(t, h, got, orderv1.Order_STATUS_CONFIRMED, "", inventoryv1.Reservation_STATE_COMMITTED, 1, 0)
		if got.Order.GetTotal().GetAmountMinor() != 3*4999 {
			t.Errorf("total = %v, want %d", got.Order.GetTotal(), 3*4999)
		}
		if !got.Order.GetUpdateTime().AsTime().Equal(time.Now()) {
			t.Errorf("update_time = %v, want the bubble's now %v", got.Order.GetUpdateTime().AsTime(), time.Now())
		}
	})
}

// TestReconcileSkipsRunningSaga: an order this process is driving is left
// to that run.
func TestReconcileSkipsRunningSaga(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
		ctx := asWithin(t, 2*time.Minute, "alice", "customer", "k1") // outlasts the wait below
		go func() {
			_, err := h.client.CreateOrder(ctx, orderReq("pm_card_ok", "keyboard-001", 1))
			done <- err
		}()
		<-entered
		time.Sleep(time.Minute)
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
	})
}

// TestReconcileBacksOff: an order that stays PENDING is driven every round
// for its rounds, then logged at ERROR and driven only after a doubling
// wait, in a synctest bubble's time.
func TestReconcileBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logRecorder{}
		h := newHarness(t, WithReconcileRounds(3), WithReconcileBackoff(time.Minute), WithLogger(slog.New(logs)))
		o := pendingOrder(t, h, "pm_card_ok")
		chargeAnswers(status.Error(codes.Unavailable, "down"))(h)
		time.Sleep(6 * time.Second)
		steps := []struct {
			name      string
			advance   time.Duration
			wantDrive bool
			wantLevel slog.Level // of the round's last reconcile line; 0 (info) when not driven
			wantWait  string
		}{
			{name: "round 1", wantDrive: true, wantLevel: slog.LevelWarn},
			{name: "round 2", advance: 2 * time.Second, wantDrive: true, wantLevel: slog.LevelWarn},
			{name: "round 3 uses up the rounds", advance: 2 * time.Second, wantDrive: true, wantLevel: slog.LevelError, wantWait: "1m0s"},
			{name: "next round skips it", advance: 2 * time.Second},
			{name: "just before the wait ends", advance: time.Minute - 3*time.Second},
			{name: "after 1m", advance: time.Second, wantDrive: true, wantLevel: slog.LevelError, wantWait: "2m0s"},
			{name: "1m into 2m", advance: time.Minute},
			{name: "after 2m", advance: time.Minute, wantDrive: true, wantLevel: slog.LevelError, wantWait: "4m0s"},
		}
		for _, st := range steps {
			time.Sleep(st.advance)
			before := h.payStub.creates.Load()
			logs.reset()
			if n, err := h.svc.Reconcile(context.Background()); n != 0 || err != nil {
				t.Fatalf("%s: Reconcile() = %d, %v; want 0, nil", st.name, n, err)
			}
			if driven := h.payStub.creates.Load() > before; driven != st.wantDrive {
				t.Errorf("%s: order driven = %v, want %v", st.name, driven, st.wantDrive)
			}
			r, ok := logs.last(func(r logRecord) bool { return r.attrs["orderId"] == o.GetId() && r.level >= slog.LevelWarn })
			if !st.wantDrive {
				if ok {
					t.Errorf("%s: logged %q for an order that waits", st.name, r.msg)
				}
				continue
			}
			if !ok || r.level != st.wantLevel || r.attrs["nextTryIn"] != st.wantWait {
				t.Errorf("%s: last line = %+v (found %v); want level %v nextTryIn %q", st.name, r, ok, st.wantLevel, st.wantWait)
			}
		}
		// Payment is back: the next due round settles it and forgets it.
		h.payStub.set(func(k *payHooks) { k.create = h.pay.CreatePayment })
		time.Sleep(4 * time.Minute)
		if n, err := h.svc.Reconcile(context.Background()); n != 1 || err != nil {
			t.Fatalf("Reconcile() after recovery = %d, %v; want 1, nil", n, err)
		}
		checkStored(t, h, h.get(o.GetId()), orderv1.Order_STATUS_CONFIRMED, "", inventoryv1.Reservation_STATE_COMMITTED, 1, 0)
		if got := h.svc.rounds.waiting(time.Now().Add(-time.Hour)); got != 0 || len(h.svc.rounds.orders) != 0 {
			t.Errorf("round book after settling = %d waiting, %d known; want empty", got, len(h.svc.rounds.orders))
		}
	})
}

func TestRoundBook(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		limit int
		base  time.Duration
		want  []time.Duration // waits after rounds 1, 2, ...
	}{
		{"one round", 1, time.Second, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{"three rounds", 3, time.Minute, []time.Duration{0, 0, time.Minute, 2 * time.Minute, 4 * time.Minute}},
		{"capped at an hour", 1, 40 * time.Minute, []time.Duration{40 * time.Minute, time.Hour, time.Hour, time.Hour}},
		{"base above the cap", 1, 2 * time.Hour, []time.Duration{time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newRoundBook()
			now := t0
			for i, want := range tt.want {
				if !b.due("ord-1", now) {
					t.Fatalf("round %d: due(at its time) = false", i+1)
				}
				round, wait := b.failed("ord-1", now, tt.limit, tt.base)
				if round != i+1 || wait != want {
					t.Errorf("failed() round %d = %d, %v; want %d, %v", i+1, round, wait, i+1, want)
				}
				if wait > 0 && (b.due("ord-1", now.Add(wait-1)) || b.waiting(now) != 1) {
					t.Errorf("round %d: due before the wait ended, or not counted waiting", i+1)
				}
				now = now.Add(wait)
			}
			b.retain(nil)
			if !b.due("ord-1", t0) || b.waiting(t0) != 0 {
				t.Errorf("after retain(nil) the order still waits")
			}
		})
	}
}
