package inventory

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/sqlitedb"
)

// TestReopen: what one store wrote, a store on the same file reads back.
func TestReopen(t *testing.T) { backends(t, testReopen) }

func testReopen(t *testing.T, path string) {
	f := newFixture(t, path, testItems())
	r := f.reserve(t, "order-1", line("keyboard-001", 2), line("mouse-001", 1))
	r, err := f.client.CommitReservation(ctx(t), &inventoryv1.CommitReservationRequest{Id: r.GetId()})
	if err != nil {
		t.Fatalf("CommitReservation: %v", err)
	}
	item := f.getItem(t, "keyboard-001")
	if err := f.store.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	g := newFixture(t, path, nil)
	got, err := g.client.GetReservation(ctx(t), &inventoryv1.GetReservationRequest{Id: r.GetId()})
	if d := cmp.Diff(r, got, protocmp.Transform()); err != nil || d != "" {
		t.Errorf("GetReservation after reopen = %v (-before +after):\n%s", err, d)
	}
	if d := cmp.Diff(item, g.getItem(t, "keyboard-001"), protocmp.Transform()); d != "" {
		t.Errorf("item after reopen (-before +after):\n%s", d)
	}
}

func TestSeed(t *testing.T) { backends(t, testSeed) }

func testSeed(t *testing.T, db string) {
	store, err := open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	seeded, err := store.Seed(ctx(t), Catalogue(t0))
	if err != nil || !seeded {
		t.Fatalf("Seed(empty) = %v, %v; want true", seeded, err)
	}
	want := Item{SKU: "keyboard-001", Name: "Mechanical Keyboard", Price: Money{4999, "USD"}, Stock: Stock{Available: 100}, UpdateTime: t0}
	if got, err := store.Item(ctx(t), "keyboard-001"); err != nil || !cmp.Equal(got, want) {
		t.Errorf("seeded keyboard-001 = %+v, %v; want %+v", got, err, want)
	}
	items, err := store.Items(ctx(t), "", 100)
	if err != nil || len(items) != len(Catalogue(t0)) {
		t.Errorf("seeded %d items, %v; want %d", len(items), err, len(Catalogue(t0)))
	}
	err = store.InTx(ctx(t), func(tx Tx) error { return tx.MoveStock(ctx(t), "keyboard-001", Stock{Available: -60}, t0) })
	if err != nil {
		t.Fatal(err)
	}
	seeded, err = store.Seed(ctx(t), Catalogue(t0))
	if err != nil || seeded {
		t.Errorf("Seed(non-empty) = %v, %v; want false", seeded, err)
	}
	if got, _ := store.Item(ctx(t), "keyboard-001"); got.Stock.Available != 40 {
		t.Errorf("keyboard-001 available after second Seed = %d, want 40 (kept)", got.Stock.Available)
	}
}

func TestSeedSkipsAnyNonEmptyCatalogue(t *testing.T) {
	store, err := OpenSQLite(t.Context(), sqlitedb.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Seed(ctx(t), testItems()[:1]); err != nil {
		t.Fatal(err)
	}
	if seeded, err := store.Seed(ctx(t), Catalogue(t0)); err != nil || seeded {
		t.Errorf("Seed = %v, %v; want false", seeded, err)
	}
	if _, err := store.Item(ctx(t), "mouse-001"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Item(mouse-001) = %v, want ErrNotFound", err)
	}
}

// TestStockNeverNegative: the schema refuses what the service would never
// ask, and the failed statement changes nothing.
func TestStockNeverNegative(t *testing.T) { backends(t, testStockNeverNegative) }

func testStockNeverNegative(t *testing.T, db string) {
	store, err := open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Seed(ctx(t), testItems()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		d    Stock
	}{
		{"available", Stock{Available: -11, Reserved: 11}},
		{"reserved", Stock{Reserved: -1, Sold: 1}},
		{"sold", Stock{Sold: -1, Available: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := store.InTx(ctx(t), func(tx Tx) error { return tx.MoveStock(ctx(t), "keyboard-001", tt.d, t0) })
			if err == nil {
				t.Errorf("MoveStock(%+v) = nil, want a CHECK failure", tt.d)
			}
			if got, _ := store.Item(ctx(t), "keyboard-001"); got.Stock != (Stock{Available: 10}) {
				t.Errorf("stock after refused move = %+v, want untouched", got.Stock)
			}
		})
	}
}
