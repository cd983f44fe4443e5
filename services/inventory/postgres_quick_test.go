package inventory

import (
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/pgtest"
)

// TestQuickPaths: the quick paths do the common case whole and anything
// else not at all, leaving it to the general path.
func TestQuickPaths(t *testing.T) {
	store, err := OpenPostgres(t.Context(), pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.Seed(t.Context(), testItems()); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	res := func(id, order string, lines ...Line) Reservation {
		return Reservation{ID: id, OrderID: order, Lines: lines, State: StateActive,
			ExpireTime: now.Add(time.Minute), CreateTime: now, UpdateTime: now}
	}
	stock := func() [2]Stock {
		var out [2]Stock
		for i, sku := range []string{"keyboard-001", "mouse-001"} {
			it, err := store.Item(t.Context(), sku)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = it.Stock
		}
		return out
	}
	kb, mouse := Line{SKU: "keyboard-001", Quantity: 2}, Line{SKU: "mouse-001", Quantity: 1}
	got, done := store.QuickReserve(t.Context(), res("res-1", "order-1", kb, mouse, Line{SKU: "keyboard-001", Quantity: 1}))
	if !done || len(got.Lines) != 3 || got.Lines[0].Price != (Money{4999, "USD"}) || got.Lines[1].Price != (Money{2499, "USD"}) {
		t.Fatalf("QuickReserve = %+v, %v; want done, lines priced in order", got, done)
	}
	if s := stock(); s != [2]Stock{{Available: 7, Reserved: 3}, {Available: 4, Reserved: 1}} {
		t.Fatalf("stock after QuickReserve = %+v, want 3 keyboards and a mouse reserved", s)
	}
	before := stock()
	refused := []struct {
		name string
		r    Reservation
	}{
		{"same order", res("res-2", "order-1", kb)},
		{"unknown SKU", res("res-3", "order-3", kb, Line{SKU: "nope-001", Quantity: 1})},
		{"too little stock", res("res-4", "order-4", kb, Line{SKU: "mouse-001", Quantity: 5})},
		{"sum over stock", res("res-5", "order-5", Line{SKU: "keyboard-001", Quantity: 4}, Line{SKU: "keyboard-001", Quantity: 4})},
	}
	for _, tc := range refused {
		if _, done := store.QuickReserve(t.Context(), tc.r); done {
			t.Errorf("%s: QuickReserve done, want the general path", tc.name)
		}
		if s := stock(); s != before {
			t.Errorf("%s: stock %+v, want unchanged %+v", tc.name, s, before)
		}
		if _, err := store.Reservation(t.Context(), tc.r.ID); err != ErrNotFound {
			t.Errorf("%s: reservation stored (%v)", tc.name, err)
		}
	}
	settled, done := store.QuickSettle(t.Context(), "res-1", StateCommitted, now)
	if !done || settled.State != StateCommitted || settled.OrderID != "order-1" || len(settled.Lines) != 3 || settled.Lines[2].Quantity != 1 {
		t.Fatalf("QuickSettle = %+v, %v; want order-1 COMMITTED with its 3 lines", settled, done)
	}
	if s := stock(); s != [2]Stock{{Available: 7, Sold: 3}, {Available: 4, Sold: 1}} {
		t.Errorf("stock after QuickSettle = %+v, want the reserved units sold", s)
	}
	if _, done := store.QuickSettle(t.Context(), "res-1", StateReleased, now); done {
		t.Errorf("QuickSettle of a COMMITTED reservation done, want the general path")
	}
	expired := res("res-6", "order-6", kb)
	expired.ExpireTime = now.Add(-time.Second)
	if _, done := store.QuickReserve(t.Context(), expired); !done {
		t.Fatal("QuickReserve of order-6 not done")
	}
	if _, done := store.QuickSettle(t.Context(), "res-6", StateCommitted, now); done {
		t.Errorf("QuickSettle of an expired reservation done, want the general path")
	}
	if _, done := store.QuickSettle(t.Context(), "res-none", StateCommitted, now); done {
		t.Errorf("QuickSettle of an unknown reservation done, want the general path")
	}
}
