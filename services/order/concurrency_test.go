package order

import (
	"fmt"
	"sync"
	"testing"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestLastUnits races n customers for the last k units: exactly k orders
// confirm, each with a committed reservation and exactly one capture, and
// the rest fail INSUFFICIENT_STOCK having charged nothing.
func TestLastUnits(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		const n, k = 30, 10
		h := newHarnessDB(t, db)
		h.inv.setStock("last-001", 1500, k)
		orders := make([]*orderv1.Order, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			ctx := as(t, fmt.Sprintf("customer-%d", i), "customer", "last")
			wg.Go(func() { orders[i], errs[i] = h.client.CreateOrder(ctx, orderReq("pm_card_ok", "last-001", 1)) })
		}
		wg.Wait()
		confirmed, soldOut := 0, 0
		for i := range n {
			switch {
			case errs[i] == nil && orders[i].GetStatus() == orderv1.Order_STATUS_CONFIRMED:
				confirmed++
			case rpcerr.Reason(errs[i]) == reasonInsufficientStock:
				soldOut++
			default:
				t.Errorf("order %d = %v, %v; want CONFIRMED or INSUFFICIENT_STOCK", i, orders[i].GetStatus(), errs[i])
			}
		}
		if confirmed != k || soldOut != n-k {
			t.Errorf("confirmed %d, sold out %d; want %d and %d", confirmed, soldOut, k, n-k)
		}
		recs := h.stored()
		if len(recs) != n {
			t.Fatalf("stored orders = %d, want %d", len(recs), n)
		}
		for _, r := range recs {
			switch r.Order.GetStatus() {
			case orderv1.Order_STATUS_CONFIRMED:
				checkStored(t, h, r, orderv1.Order_STATUS_CONFIRMED, "", inventoryv1.Reservation_STATE_COMMITTED, 1, 0)
			default:
				checkStored(t, h, r, orderv1.Order_STATUS_FAILED, failureInsufficientStock, inventoryv1.Reservation_STATE_UNSPECIFIED, 0, 0)
			}
		}
		if payments, _ := h.pay.count(""); payments != k {
			t.Errorf("payments = %d, want %d", payments, k)
		}
		if it := h.inv.item("last-001"); it.sold != k || it.available != 0 || it.reserved != 0 {
			t.Errorf("stock = %+v, want %d sold and nothing left", it, k)
		}
	})
}
