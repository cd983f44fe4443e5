package inventory

import (
	"fmt"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestLastUnits races 50 orders for the last 10 units on each backend
// (several connections, so SQLite's locking and PostgreSQL's row locks are exercised): exactly 10 win,
// and each winner then commits or releases while the others keep reserving.
func TestLastUnits(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		const racers, units = 50, 10
		f := newFixture(t, db, []Item{
			{SKU: "last-001", Name: "Last", Price: Money{1, "USD"}, Stock: Stock{Available: units}, UpdateTime: t0},
		})
		var wg sync.WaitGroup
		results := make([]*inventoryv1.Reservation, racers)
		errs := make([]error, racers)
		settleErrs := make([]error, racers)
		c := ctx(t)
		for i := range racers {
			wg.Go(func() {
				results[i], errs[i] = f.client.ReserveStock(c, &inventoryv1.ReserveStockRequest{
					OrderId: fmt.Sprintf("order-%d", i), Lines: []*inventoryv1.Line{line("last-001", 1)},
				})
				if errs[i] != nil {
					return
				}
				if i%2 == 0 {
					_, settleErrs[i] = f.client.CommitReservation(c, &inventoryv1.CommitReservationRequest{Id: results[i].GetId()})
				} else {
					_, settleErrs[i] = f.client.ReleaseReservation(c, &inventoryv1.ReleaseReservationRequest{Id: results[i].GetId()})
				}
			})
		}
		wg.Wait()
		won, sold := 0, int64(0)
		for i := range racers {
			switch {
			case errs[i] == nil:
				won++
				if i%2 == 0 {
					sold++
				}
			case status.Code(errs[i]) == codes.FailedPrecondition && rpcerr.Reason(errs[i]) == reasonInsufficientStock:
			default:
				t.Errorf("ReserveStock %d = %v, want success or INSUFFICIENT_STOCK", i, errs[i])
			}
			if settleErrs[i] != nil {
				t.Errorf("settling reservation %d: %v", i, settleErrs[i])
			}
		}
		s := f.stock(t, "last-001")
		if won < units || s.Sold != sold || s.Reserved != 0 || s.Available != units-sold {
			t.Errorf("%d reservations won, stock %+v; want at least %d winners, %d sold, rest available", won, s, units, sold)
		}
	})
}

// TestExactlyLastUnits: with no releases, exactly 10 of 50 win.
func TestExactlyLastUnits(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		const racers, units = 50, 10
		f := newFixture(t, db, []Item{
			{SKU: "last-001", Name: "Last", Price: Money{1, "USD"}, Stock: Stock{Available: units}, UpdateTime: t0},
		})
		var wg sync.WaitGroup
		errs := make([]error, racers)
		c := ctx(t)
		for i := range racers {
			wg.Go(func() {
				_, errs[i] = f.client.ReserveStock(c, &inventoryv1.ReserveStockRequest{
					OrderId: fmt.Sprintf("order-%d", i), Lines: []*inventoryv1.Line{line("last-001", 1)},
				})
			})
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case rpcerr.Reason(err) != reasonInsufficientStock:
				t.Errorf("ReserveStock %d = %v, want success or INSUFFICIENT_STOCK", i, err)
			}
		}
		if s := f.stock(t, "last-001"); won != units || s != (Stock{Reserved: units}) {
			t.Errorf("%d won, stock %+v; want %d won and all reserved", won, s, units)
		}
	})
}

// TestConcurrentSameOrder: 20 racing repeats of one order reserve once.
func TestConcurrentSameOrder(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		f := newFixture(t, db, testItems())
		var wg sync.WaitGroup
		ids := make([]string, 20)
		errs := make([]error, 20)
		c := ctx(t)
		for i := range ids {
			wg.Go(func() {
				r, err := f.client.ReserveStock(c, &inventoryv1.ReserveStockRequest{
					OrderId: "order-1", Lines: []*inventoryv1.Line{line("keyboard-001", 2)},
				})
				ids[i], errs[i] = r.GetId(), err
			})
		}
		wg.Wait()
		for i := range ids {
			if errs[i] != nil || ids[i] != ids[0] {
				t.Errorf("ReserveStock %d = %q, %v; want %q", i, ids[i], errs[i], ids[0])
			}
		}
		if s := f.stock(t, "keyboard-001"); s != (Stock{Available: 8, Reserved: 2}) {
			t.Errorf("keyboard stock = %+v, want 2 reserved once", s)
		}
	})
}
