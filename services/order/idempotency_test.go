package order

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func replayed(md metadata.MD) bool {
	v := md.Get(ReplayedHeader)
	return len(v) == 1 && v[0] == "true"
}

func TestCreateOrderReplay(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		h := newHarnessDB(t, db)
		req := orderReq("pm_card_ok", "keyboard-001", 1)
		var h1, h2 metadata.MD
		first, err := h.client.CreateOrder(alice(t, "k1"), req, grpc.Header(&h1))
		if err != nil {
			t.Fatalf("first CreateOrder: %v", err)
		}
		again, err := h.client.CreateOrder(alice(t, "k1"), req, grpc.Header(&h2))
		if err != nil || again.GetId() != first.GetId() || again.GetStatus() != orderv1.Order_STATUS_CONFIRMED {
			t.Fatalf("replay = %v %v, %v; want CONFIRMED %s", again.GetId(), again.GetStatus(), err, first.GetId())
		}
		if replayed(h1) || !replayed(h2) {
			t.Errorf("%s header: first %v, replay %v; want only the replay marked", ReplayedHeader, h1, h2)
		}
		if n := h.invStub.reserves.Load(); n != 1 {
			t.Errorf("ReserveStock calls = %d, want 1", n)
		}
		if n := h.payStub.creates.Load(); n != 1 {
			t.Errorf("CreatePayment calls = %d, want 1", n)
		}
		// A client echoing the unit prices it was shown still replays.
		echo := orderReq("pm_card_ok", "keyboard-001", 1)
		echo.Lines[0].UnitPrice = first.GetLines()[0].GetUnitPrice()
		if o, err := h.client.CreateOrder(alice(t, "k1"), echo); err != nil || o.GetId() != first.GetId() {
			t.Errorf("replay with output-only prices = %v, %v; want order %s", o.GetId(), err, first.GetId())
		}
	})
}

func TestCreateOrderReplaysFailure(t *testing.T) {
	h := newHarness(t)
	req := orderReq("pm_card_ok", "keyboard-001", 500)
	_, first := h.client.CreateOrder(alice(t, "k1"), req)
	var hdr metadata.MD
	_, again := h.client.CreateOrder(alice(t, "k1"), req, grpc.Header(&hdr))
	if rpcerr.Reason(first) != reasonInsufficientStock {
		t.Fatalf("first = %v, want INSUFFICIENT_STOCK", first)
	}
	if a, b := rpcerr.ErrorInfo(first), rpcerr.ErrorInfo(again); a.String() != b.String() {
		t.Errorf("replayed error %v, want the first %v", b, a)
	}
	if !replayed(hdr) {
		t.Errorf("failed replay header = %v, want %s: true", hdr, ReplayedHeader)
	}
	if n := h.invStub.reserves.Load(); n != 1 {
		t.Errorf("ReserveStock calls = %d, want 1", n)
	}
}

func TestCreateOrderKeyReuse(t *testing.T) {
	tests := []struct {
		name       string
		subject    string
		req        *orderv1.CreateOrderRequest
		wantCode   codes.Code
		wantReason string
		wantNew    bool // a second order exists
	}{
		{"same customer, different body", "alice", orderReq("pm_card_ok", "keyboard-001", 2), codes.FailedPrecondition, reasonIdempotencyKeyReused, false},
		{"same customer, other method", "alice", orderReq("pm_card_declined", "keyboard-001", 1), codes.FailedPrecondition, reasonIdempotencyKeyReused, false},
		{"other customer, same key and body", "bob", orderReq("pm_card_ok", "keyboard-001", 1), codes.OK, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			first, err := h.client.CreateOrder(alice(t, "shared"), orderReq("pm_card_ok", "keyboard-001", 1))
			if err != nil {
				t.Fatalf("first CreateOrder: %v", err)
			}
			o, err := h.client.CreateOrder(as(t, tt.subject, "customer", "shared"), tt.req)
			if reason := rpcerr.Reason(err); status.Code(err) != tt.wantCode || reason != tt.wantReason {
				t.Fatalf("CreateOrder(%s) = %v; want %v %q", tt.subject, err, tt.wantCode, tt.wantReason)
			}
			if n := len(h.stored()); (n == 2) != tt.wantNew {
				t.Errorf("stored orders = %d, want a second: %v", n, tt.wantNew)
			}
			if tt.wantNew && (o.GetId() == first.GetId() || o.GetCustomer() != tt.subject) {
				t.Errorf("second order = %s of %s, want a new order of %s", o.GetId(), o.GetCustomer(), tt.subject)
			}
		})
	}
}

// TestCreateOrderConcurrentKey: 20 calls with one key at once make one
// order, one reservation and one charge, and all answer that order.
func TestCreateOrderConcurrentKey(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		const n = 20
		h := newHarnessDB(t, db)
		h.invStub.set(func(k *invHooks) {
			k.reserve = func(ctx context.Context, r *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
				// Widen the window in which the other calls arrive; the checks
				// below hold whatever the interleaving.
				select {
				case <-time.After(100 * time.Millisecond):
				case <-ctx.Done():
				}
				return h.inv.ReserveStock(ctx, r)
			}
		})
		req := orderReq("pm_card_ok", "keyboard-001", 1)
		orders := make([]*orderv1.Order, n)
		errs := make([]error, n)
		hdrs := make([]metadata.MD, n)
		var wg sync.WaitGroup
		for i := range n {
			ctx := alice(t, "same-key")
			wg.Go(func() { orders[i], errs[i] = h.client.CreateOrder(ctx, req, grpc.Header(&hdrs[i])) })
		}
		wg.Wait()
		replays := 0
		for i := range n {
			if errs[i] != nil || orders[i].GetId() != orders[0].GetId() || orders[i].GetStatus() != orderv1.Order_STATUS_CONFIRMED {
				t.Errorf("call %d = %v %v, %v; want CONFIRMED %s", i, orders[i].GetId(), orders[i].GetStatus(), errs[i], orders[0].GetId())
			}
			if replayed(hdrs[i]) {
				replays++
			}
		}
		if replays != n-1 {
			t.Errorf("replay headers = %d, want %d", replays, n-1)
		}
		if got := len(h.stored()); got != 1 {
			t.Errorf("stored orders = %d, want 1", got)
		}
		if got := h.invStub.reserves.Load(); got != 1 {
			t.Errorf("ReserveStock calls = %d, want 1", got)
		}
		if payments, calls := h.pay.count(PaymentKey(orders[0].GetId())); payments != 1 || calls != 1 {
			t.Errorf("payments = %d, CreatePayment calls = %d; want 1 and 1", payments, calls)
		}
	})
}

// TestCreateOrderRetryAfterInventoryDown: the UNAVAILABLE answer freed the
// key, so the retry creates the order afresh.
func TestCreateOrderRetryAfterInventoryDown(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		h := newHarnessDB(t, db)
		h.invStub.set(func(k *invHooks) {
			k.reserve = func(ctx context.Context, _ *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
				return nil, unavailableErr(ctx)
			}
		})
		req := orderReq("pm_card_ok", "keyboard-001", 1)
		if _, err := h.client.CreateOrder(alice(t, "k1"), req); rpcerr.Reason(err) != reasonInventoryUnavailable {
			t.Fatalf("with inventory down = %v, want INVENTORY_UNAVAILABLE", err)
		}
		h.invStub.set(func(k *invHooks) { k.reserve = h.inv.ReserveStock })
		var hdr metadata.MD
		o, err := h.client.CreateOrder(alice(t, "k1"), req, grpc.Header(&hdr))
		if err != nil || o.GetStatus() != orderv1.Order_STATUS_CONFIRMED || replayed(hdr) {
			t.Fatalf("retry = %v, %v, header %v; want a fresh CONFIRMED order", o.GetStatus(), err, hdr)
		}
		if got := len(h.stored()); got != 1 {
			t.Errorf("stored orders = %d, want 1", got)
		}
	})
}
