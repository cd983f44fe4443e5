package order

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/prefer"
)

// killInventory makes the inventory stub refuse every call UNAVAILABLE
// (unreachable, or its breaker open), before anything could be reserved.
func killInventory(h *harness) {
	h.invStub.set(func(k *invHooks) {
		k.reserve = func(ctx context.Context, _ *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
			return nil, unavailableErr(ctx)
		}
		k.commit = func(ctx context.Context, _ *inventoryv1.CommitReservationRequest) (*inventoryv1.Reservation, error) {
			return nil, unavailableErr(ctx)
		}
	})
}

// inventoryUp puts the fake inventory back behind the stub.
func inventoryUp(h *harness) {
	h.invStub.set(func(k *invHooks) {
		k.reserve, k.commit, k.release = h.inv.ReserveStock, h.inv.CommitReservation, h.inv.ReleaseReservation
	})
}

// asyncCtx is alice's call with key and "prefer: respond-async".
func asyncCtx(t *testing.T, key string) context.Context {
	return metadata.AppendToOutgoingContext(alice(t, key), prefer.MetadataKey, "wait=5, respond-async")
}

// createAsync places an order preferring respond-async; it returns the
// order, the error and whether the answer said the preference was applied.
func createAsync(t *testing.T, h *harness, key string, skuQty ...any) (*orderv1.Order, bool, error) {
	t.Helper()
	var hdr metadata.MD
	o, err := h.client.CreateOrder(asyncCtx(t, key), orderReq("pm_card_ok", skuQty...), grpc.Header(&hdr))
	applied := len(hdr.Get(prefer.AppliedKey)) == 1 && hdr.Get(prefer.AppliedKey)[0] == prefer.RespondAsync
	return o, applied, err
}

// reconcile runs one reconciler round and returns how many orders settled.
func reconcile(t *testing.T, h *harness) int {
	t.Helper()
	n, err := h.svc.Reconcile(context.Background())
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return n
}

func wantStatus(t *testing.T, h *harness, id string, want orderv1.Order_Status) *Record {
	t.Helper()
	r := h.get(id)
	if got := r.Order.GetStatus(); got != want {
		t.Fatalf("order %s is %v, want %v", id, got, want)
	}
	return r
}

// TestAcceptedThenConfirmed: inventory down, respond-async preferred: the
// order is ACCEPTED with nothing reserved or charged; once inventory is
// back one round confirms it with one reservation and one capture, and
// another round changes nothing.
func TestAcceptedThenConfirmed(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		h := newHarnessDB(t, db)
		killInventory(h)
		o, applied, err := createAsync(t, h, "k1", "keyboard-001", 1)
		if err != nil || o.GetStatus() != orderv1.Order_STATUS_ACCEPTED || !applied {
			t.Fatalf("CreateOrder = %v, applied %v, %v; want ACCEPTED, applied", o.GetStatus(), applied, err)
		}
		if o.GetReservationId() != "" || h.payStub.creates.Load() != 0 {
			t.Fatalf("accepted order has reservation %q, %d charges; want none", o.GetReservationId(), h.payStub.creates.Load())
		}
		wantStatus(t, h, o.GetId(), orderv1.Order_STATUS_ACCEPTED)

		if n := reconcile(t, h); n != 0 {
			t.Fatalf("Reconcile with inventory down settled %d", n)
		}
		wantStatus(t, h, o.GetId(), orderv1.Order_STATUS_ACCEPTED)

		inventoryUp(h)
		if n := reconcile(t, h); n != 1 {
			t.Fatalf("Reconcile settled %d, want 1", n)
		}
		r := wantStatus(t, h, o.GetId(), orderv1.Order_STATUS_CONFIRMED)
		if res := h.inv.reservation(o.GetId()); res.GetState() != inventoryv1.Reservation_STATE_COMMITTED || res.GetId() != r.Order.GetReservationId() {
			t.Errorf("reservation %v, order has %q; want it COMMITTED", res, r.Order.GetReservationId())
		}
		reconcile(t, h)
		if captured, _ := h.pay.charges(o.GetId()); captured != 1 || h.payStub.creates.Load() != 1 {
			t.Errorf("captures %d, CreatePayment calls %d; want 1, 1", captured, h.payStub.creates.Load())
		}
	})
}

// TestAcceptOnlyWhenAsked: without the preference the order is refused
// UNAVAILABLE and withdrawn, as before; a timeout keeps its PENDING answer
// with the preference too; a malformed preference is INVALID_ARGUMENT.
func TestAcceptOnlyWhenAsked(t *testing.T) {
	h := newHarness(t)
	killInventory(h)
	if _, err := h.client.CreateOrder(alice(t, "plain"), orderReq("pm_card_ok", "keyboard-001", 1)); status.Code(err) != codes.Unavailable {
		t.Fatalf("CreateOrder without the preference: %v, want UNAVAILABLE", err)
	}
	if n := len(h.stored()); n != 0 {
		t.Fatalf("%d orders stored after a refusal, want 0", n)
	}

	h.invStub.set(func(k *invHooks) {
		k.reserve = func(context.Context, *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
			return nil, status.Error(codes.DeadlineExceeded, "answer lost")
		}
	})
	o, applied, err := createAsync(t, h, "timeout", "keyboard-001", 1)
	if err != nil || o.GetStatus() != orderv1.Order_STATUS_PENDING || applied {
		t.Fatalf("CreateOrder with a reserve timeout = %v, applied %v, %v; want PENDING, not applied", o.GetStatus(), applied, err)
	}

	ctx := metadata.AppendToOutgoingContext(alice(t, "bad"), prefer.MetadataKey, `"respond-async"`)
	if _, err := h.client.CreateOrder(ctx, orderReq("pm_card_ok", "keyboard-001", 1)); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("CreateOrder with a malformed prefer: %v, want INVALID_ARGUMENT", err)
	}
	ctx = metadata.AppendToOutgoingContext(alice(t, "unknown"), prefer.MetadataKey, "return=minimal; x=1")
	killInventory(h)
	if _, err := h.client.CreateOrder(ctx, orderReq("pm_card_ok", "keyboard-001", 1)); status.Code(err) != codes.Unavailable {
		t.Fatalf("CreateOrder preferring only unknown things: %v, want UNAVAILABLE", err)
	}
}

// TestAcceptedBound: past WithMaxAccepted the answer is UNAVAILABLE and
// the order withdrawn; a replay of an accepted order answers it again.
func TestAcceptedBound(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		h := newHarnessDB(t, db, WithMaxAccepted(2))
		killInventory(h)
		for _, k := range []string{"a", "b"} {
			if o, _, err := createAsync(t, h, k, "keyboard-001", 1); err != nil || o.GetStatus() != orderv1.Order_STATUS_ACCEPTED {
				t.Fatalf("CreateOrder %s = %v, %v; want ACCEPTED", k, o.GetStatus(), err)
			}
		}
		if _, _, err := createAsync(t, h, "c", "keyboard-001", 1); status.Code(err) != codes.Unavailable {
			t.Fatalf("CreateOrder past the bound: %v, want UNAVAILABLE", err)
		}
		if n := len(h.stored()); n != 2 {
			t.Fatalf("%d orders stored, want 2", n)
		}
		o, applied, err := createAsync(t, h, "a", "keyboard-001", 1)
		if err != nil || o.GetStatus() != orderv1.Order_STATUS_ACCEPTED || !applied {
			t.Fatalf("replay = %v, applied %v, %v; want ACCEPTED, applied", o.GetStatus(), applied, err)
		}
	})
}

// TestAcceptedBoundConcurrent: concurrent accepts never pass the bound.
func TestAcceptedBoundConcurrent(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		h := newHarnessDB(t, db, WithMaxAccepted(3))
		killInventory(h)
		const n = 10
		var wg sync.WaitGroup
		var accepted atomic.Int32
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o, err := h.client.CreateOrder(asyncCtx(t, fmt.Sprint("c", i)), orderReq("pm_card_ok", "keyboard-001", 1))
				if err == nil && o.GetStatus() == orderv1.Order_STATUS_ACCEPTED {
					accepted.Add(1)
				}
			}()
		}
		wg.Wait()
		if got, stored := accepted.Load(), len(h.stored()); got != 3 || stored != 3 {
			t.Errorf("%d of %d concurrent orders accepted, %d stored; want 3 and 3", got, n, stored)
		}
	})
}

// TestAcceptedArrivalOrder: three orders wait for one keyboard left; once
// inventory is back the first to arrive gets it, the others fail
// INSUFFICIENT_STOCK and nothing is charged for them.
func TestAcceptedArrivalOrder(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		h := newHarnessDB(t, db)
		h.inv.setStock("keyboard-001", 4999, 1)
		killInventory(h)
		var ids []string
		for _, k := range []string{"first", "second", "third"} {
			o, _, err := createAsync(t, h, k, "keyboard-001", 1)
			if err != nil {
				t.Fatalf("CreateOrder %s: %v", k, err)
			}
			ids = append(ids, o.GetId())
		}
		before := h.invStub.reserves.Load()
		reconcile(t, h)
		if got := h.invStub.reserves.Load() - before; got != 1 {
			t.Fatalf("a round with inventory down tried %d reservations, want 1 (the oldest)", got)
		}
		inventoryUp(h)
		if n := reconcile(t, h); n != 3 {
			t.Fatalf("Reconcile settled %d, want 3", n)
		}
		wantStatus(t, h, ids[0], orderv1.Order_STATUS_CONFIRMED)
		for _, id := range ids[1:] {
			if r := wantStatus(t, h, id, orderv1.Order_STATUS_FAILED); r.Order.GetFailureReason() != failureInsufficientStock {
				t.Errorf("order %s failed %q, want %s", id, r.Order.GetFailureReason(), failureInsufficientStock)
			}
			if c, _ := h.pay.charges(id); c != 0 {
				t.Errorf("order %s has %d captures, want 0", id, c)
			}
		}
		if n := h.payStub.creates.Load(); n != 1 {
			t.Errorf("CreatePayment called %d times, want 1", n)
		}
	})
}

// TestAcceptedInventoryDiesMidSaga: the reservation lands, then inventory
// dies before the commit: the order is PENDING with its reservation, and
// the next rounds finish it with that one reservation and one capture.
func TestAcceptedInventoryDiesMidSaga(t *testing.T) {
	h := newHarness(t, WithReconcileAfter(0))
	killInventory(h)
	o, _, err := createAsync(t, h, "k1", "keyboard-001", 1)
	if err != nil {
		t.Fatal(err)
	}
	h.invStub.set(func(k *invHooks) { k.reserve = h.inv.ReserveStock }) // commit still down
	reconcile(t, h)
	r := wantStatus(t, h, o.GetId(), orderv1.Order_STATUS_PENDING)
	if r.Order.GetReservationId() == "" {
		t.Fatal("PENDING order after a reservation has no reservation id")
	}
	inventoryUp(h)
	reconcile(t, h)
	wantStatus(t, h, o.GetId(), orderv1.Order_STATUS_CONFIRMED)
	if n := len(h.inv.byID); n != 1 {
		t.Errorf("%d reservations, want 1", n)
	}
	if c, _ := h.pay.charges(o.GetId()); c != 1 {
		t.Errorf("%d captures, want 1", c)
	}
}

// TestAcceptedSurviveRestart: accepted orders outlive the process; the
// new one confirms each exactly once.
func TestAcceptedSurviveRestart(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		h := newHarnessDB(t, db)
		// On PostgreSQL a restarted process takes its own leases back
		// when it keeps its owner name (another's lapse after the TTL).
		h.lease = Lease{Owner: "order-restarted"}
		h.restart()
		killInventory(h)
		var ids []string
		for _, k := range []string{"a", "b"} {
			o, _, err := createAsync(t, h, k, "keyboard-001", 1)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, o.GetId())
		}
		h.restart()
		inventoryUp(h)
		if n := reconcile(t, h); n != 2 {
			t.Fatalf("Reconcile after restart settled %d, want 2", n)
		}
		h.restart()
		reconcile(t, h)
		for _, id := range ids {
			wantStatus(t, h, id, orderv1.Order_STATUS_CONFIRMED)
			if c, _ := h.pay.charges(id); c != 1 {
				t.Errorf("order %s has %d captures, want 1", id, c)
			}
		}
		if n := h.payStub.creates.Load(); n != 2 {
			t.Errorf("CreatePayment called %d times, want 2", n)
		}
	})
}

// TestAcceptedMetric: the reconciler's gauge counts the orders waiting.
func TestAcceptedMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, WithTelemetry(nil, reg))
	killInventory(h)
	for _, k := range []string{"a", "b"} {
		if _, _, err := createAsync(t, h, k, "keyboard-001", 1); err != nil {
			t.Fatal(err)
		}
	}
	reconcile(t, h)
	if got := testutil.ToFloat64(h.svc.metrics.accepted); got != 2 {
		t.Errorf("portico_order_reconcile_accepted = %v, want 2", got)
	}
	inventoryUp(h)
	reconcile(t, h)
	reconcile(t, h)
	if got := testutil.ToFloat64(h.svc.metrics.accepted); got != 0 {
		t.Errorf("portico_order_reconcile_accepted after confirming = %v, want 0", got)
	}
}

// TestCancelAccepted: an ACCEPTED order cancels at once, and the
// reconciler leaves it alone afterwards.
func TestCancelAccepted(t *testing.T) {
	h := newHarness(t)
	killInventory(h)
	o, _, err := createAsync(t, h, "k1", "keyboard-001", 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.client.CancelOrder(alice(t, ""), &orderv1.CancelOrderRequest{Id: o.GetId()})
	if err != nil || c.GetStatus() != orderv1.Order_STATUS_CANCELLED {
		t.Fatalf("CancelOrder = %v, %v; want CANCELLED", c.GetStatus(), err)
	}
	inventoryUp(h)
	reconcile(t, h)
	wantStatus(t, h, o.GetId(), orderv1.Order_STATUS_CANCELLED)
	if n := h.payStub.creates.Load(); n != 0 {
		t.Errorf("CreatePayment called %d times, want 0", n)
	}
}

// TestRespondAsyncValue: respond-async is applied only when sent without
// a value (RFC 7240 defines none; an empty quoted one is none), as the
// edge reads it: "respond-async=false" and the like get the plain
// refusal, nothing kept.
func TestRespondAsyncValue(t *testing.T) {
	tests := []struct {
		name   string
		prefer []string // prefer metadata values
		want   bool     // applied: ACCEPTED
	}{
		{"bare", []string{"respond-async"}, true},
		{"empty quoted value", []string{`respond-async=""`}, true},
		{"second value", []string{"wait=5", "respond-async"}, true},
		{"false", []string{"respond-async=false"}, false},
		{"true", []string{"respond-async=true"}, false},
		{"valued first", []string{"respond-async=false, respond-async"}, false},
		{"valued first over values", []string{"respond-async=0", "respond-async"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			killInventory(h)
			ctx := alice(t, "k")
			for _, v := range tt.prefer {
				ctx = metadata.AppendToOutgoingContext(ctx, prefer.MetadataKey, v)
			}
			var hdr metadata.MD
			o, err := h.client.CreateOrder(ctx, orderReq("pm_card_ok", "keyboard-001", 1), grpc.Header(&hdr))
			applied := len(hdr.Get(prefer.AppliedKey)) > 0
			if tt.want {
				if err != nil || o.GetStatus() != orderv1.Order_STATUS_ACCEPTED || !applied {
					t.Fatalf("CreateOrder preferring %q = %v, applied %v, %v; want ACCEPTED, applied", tt.prefer, o.GetStatus(), applied, err)
				}
				return
			}
			if status.Code(err) != codes.Unavailable || applied {
				t.Fatalf("CreateOrder preferring %q = %v, applied %v; want UNAVAILABLE, not applied", tt.prefer, err, applied)
			}
			if n := len(h.stored()); n != 0 {
				t.Errorf("%d orders stored after a refusal, want 0", n)
			}
		})
	}
}
