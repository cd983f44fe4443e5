package inventory_test

import (
	"context"
	"fmt"
	"time"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/sqlitedb"
	"github.com/portico-gateway/portico/services/inventory"
)

// Stock moves available -> reserved -> sold, and the reservation is keyed by
// its order: repeating ReserveStock reserves nothing more.
func Example() {
	ctx := context.Background()
	store, err := inventory.OpenSQLite(ctx, sqlitedb.Memory)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	if _, err := store.Seed(ctx, inventory.Catalogue(time.Now())); err != nil {
		panic(err)
	}
	svc, err := inventory.New(store)
	if err != nil {
		panic(err)
	}
	req := &inventoryv1.ReserveStockRequest{
		OrderId: "order-1",
		Lines:   []*inventoryv1.Line{{Sku: "keyboard-001", Quantity: 2}},
	}
	show := func(step string) {
		it, _ := svc.GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "keyboard-001"})
		fmt.Printf("%-8s available=%d reserved=%d sold=%d\n", step, it.GetAvailable(), it.GetReserved(), it.GetSold())
	}
	r, _ := svc.ReserveStock(ctx, req)
	show("reserve")
	_, _ = svc.ReserveStock(ctx, req)
	show("repeat")
	_, _ = svc.CommitReservation(ctx, &inventoryv1.CommitReservationRequest{Id: r.GetId()})
	show("commit")
	// Output:
	// reserve  available=98 reserved=2 sold=0
	// repeat   available=98 reserved=2 sold=0
	// commit   available=98 reserved=0 sold=2
}
