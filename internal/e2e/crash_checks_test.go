package e2e

import (
	"database/sql"
	"testing"

	_ "modernc.org/sqlite" // reads the services' files once they have stopped

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestSagaCrash's invariant checks: through the services' APIs while they
// run, and from their SQLite files.

// checkCrashOrders checks each order's payments and reservation through
// the services' APIs.
func checkCrashOrders(t *testing.T, c *cluster, orders map[string]*orderv1.Order) {
	t.Helper()
	ctx := as(t, "admin", "admin", "")
	for id, o := range orders {
		ps, err := c.Payment.ListPayments(ctx, &paymentv1.ListPaymentsRequest{OrderId: id, PageSize: 100})
		if err != nil {
			t.Fatalf("ListPayments(%s): %v", id, err)
		}
		var captured []*paymentv1.Payment
		for _, p := range ps.GetPayments() {
			if p.GetStatus() == paymentv1.Payment_STATUS_CAPTURED {
				captured = append(captured, p)
			}
		}
		res := reservationState(t, c, o)
		switch o.GetStatus() {
		case orderv1.Order_STATUS_CONFIRMED:
			if len(captured) != 1 || captured[0].GetAmount().GetAmountMinor() != o.GetTotal().GetAmountMinor() {
				t.Errorf("CONFIRMED order %s (total %v): captured %v, want one payment of its total", id, o.GetTotal(), captured)
			}
			if res != inventoryv1.Reservation_STATE_COMMITTED {
				t.Errorf("CONFIRMED order %s: reservation %v, want COMMITTED", id, res)
			}
		case orderv1.Order_STATUS_FAILED:
			if len(captured) != 0 {
				t.Errorf("FAILED order %s (%s): %d captured payments not refunded", id, o.GetFailureReason(), len(captured))
			}
			switch res {
			case inventoryv1.Reservation_STATE_UNSPECIFIED, inventoryv1.Reservation_STATE_RELEASED:
			case inventoryv1.Reservation_STATE_ACTIVE:
				// The compensating release did not go through (inventory
				// down): its TTL releases it (compensate.go releaseOrLeave),
				// and checkCrashStock counts it as held.
				t.Logf("FAILED order %s (%s): reservation left ACTIVE for its TTL", id, o.GetFailureReason())
			default:
				t.Errorf("FAILED order %s (%s): reservation %v, want none, RELEASED, or ACTIVE until its TTL", id, o.GetFailureReason(), res)
			}
		default:
			t.Errorf("order %s is %v", id, o.GetStatus())
		}
	}
}

// reservationState is the state of o's reservation, UNSPECIFIED when it
// has none.
func reservationState(t *testing.T, c *cluster, o *orderv1.Order) inventoryv1.Reservation_State {
	t.Helper()
	if o.GetReservationId() == "" {
		return inventoryv1.Reservation_STATE_UNSPECIFIED
	}
	r, err := c.Inventory.GetReservation(as(t, "admin", "admin", ""), &inventoryv1.GetReservationRequest{Id: o.GetReservationId()})
	if err != nil {
		t.Fatalf("GetReservation(%s) of %s: %v", o.GetReservationId(), o.GetId(), err)
	}
	return r.GetState()
}

// checkCrashStock: each SKU lost exactly the units of its CONFIRMED
// orders and sold them, and holds only what withdrawnHolds finds left to
// a TTL.
func checkCrashStock(t *testing.T, c *cluster, initial map[string]*inventoryv1.Item, orders map[string]*orderv1.Order) {
	t.Helper()
	confirmed := map[string]int64{}
	for _, o := range orders {
		if o.GetStatus() == orderv1.Order_STATUS_CONFIRMED {
			for _, l := range o.GetLines() {
				confirmed[l.GetSku()] += int64(l.GetQuantity())
			}
		}
	}
	held := withdrawnHolds(t, c, orders)
	for _, sku := range crashSKUs {
		before, after, q, h := initial[sku], item(t, c, sku), confirmed[sku], held[sku]
		t.Logf("%s: %d units confirmed, %d held for withdrawn or failed orders until their TTL; available %d -> %d", sku, q, h, before.GetAvailable(), after.GetAvailable())
		if after.GetAvailable() != before.GetAvailable()-q-h || after.GetSold() != before.GetSold()+q || after.GetReserved() != before.GetReserved()+h {
			t.Errorf("%s: %+v -> %+v, want available-%d, sold+%d, reserved+%d", sku, before, after, q+h, q, h)
		}
	}
}

// withdrawnHolds is the stock held, by SKU, by ACTIVE reservations left to
// their TTL: of an order that does not exist (inventory died after
// reserving but before answering, so order withdrew the order: create.go
// run), or of a FAILED order whose compensating release did not go through
// (compensate.go releaseOrLeave). Both are documented and never charged.
func withdrawnHolds(t *testing.T, c *cluster, orders map[string]*orderv1.Order) map[string]int64 {
	t.Helper()
	held := map[string]int64{}
	queryRows(t, c.db("inventory"), `SELECT r.order_id, l.sku, l.quantity FROM reservations r
		JOIN reservation_lines l ON l.reservation_id = r.id WHERE r.state = 'ACTIVE'`, func(s func(...any) error) {
		var orderID, sku string
		var n int64
		if err := s(&orderID, &sku, &n); err != nil {
			t.Fatal(err)
		}
		if o := orders[orderID]; o == nil || o.GetStatus() == orderv1.Order_STATUS_FAILED {
			held[sku] += n
		}
	})
	return held
}

// checkCrashKeys: the order file holds exactly one order per key, the one
// the key's client was told about.
func checkCrashKeys(t *testing.T, c *cluster, answers []crashAnswer, orders map[string]*orderv1.Order) {
	t.Helper()
	byKey := map[string][]string{}
	queryRows(t, c.db("order"), "SELECT idempotency_key, id FROM orders", func(s func(...any) error) {
		var key, id string
		if err := s(&key, &id); err != nil {
			t.Fatal(err)
		}
		byKey[key] = append(byKey[key], id)
	})
	if len(byKey) != crashOrders || len(orders) != crashOrders {
		t.Errorf("%d keys and %d orders stored, want %d of each", len(byKey), len(orders), crashOrders)
	}
	for i, a := range answers {
		ids := byKey[crashKey(i)]
		switch {
		case len(ids) != 1:
			t.Errorf("key %s has orders %v, want one", crashKey(i), ids)
		case a.orderID != ids[0]:
			t.Errorf("key %s: client told order %q (%v, %v), stored %s", crashKey(i), a.orderID, a.status, a.err, ids[0])
		}
		if a.err != nil && rpcerr.Reason(a.err) != "PAYMENT_DECLINED" && rpcerr.Reason(a.err) != "INSUFFICIENT_STOCK" {
			t.Errorf("key %s: unexpected answer %v after %d tries", crashKey(i), a.err, a.tries)
		}
	}
}

// checkCrashOrphans: every payment belongs to a stored order, and so does
// every reservation but one of a withdrawn order (withdrawnHolds), which
// is never COMMITTED (the services list neither without an order, so
// their files are read).
func checkCrashOrphans(t *testing.T, c *cluster, orders map[string]*orderv1.Order) {
	t.Helper()
	queryRows(t, c.db("payment"), "SELECT id, order_id FROM payments", func(s func(...any) error) {
		var id, orderID string
		if err := s(&id, &orderID); err != nil {
			t.Fatal(err)
		}
		if orders[orderID] == nil {
			t.Errorf("payment %s belongs to order %s, which does not exist", id, orderID)
		}
	})
	queryRows(t, c.db("inventory"), "SELECT id, order_id, state FROM reservations", func(s func(...any) error) {
		var id, orderID, state string
		if err := s(&id, &orderID, &state); err != nil {
			t.Fatal(err)
		}
		if orders[orderID] == nil {
			if state == "COMMITTED" {
				t.Errorf("reservation %s is COMMITTED for order %s, which does not exist", id, orderID)
			}
			t.Logf("reservation %s (%s) belongs to withdrawn order %s", id, state, orderID)
		}
	})
}

// queryRows runs query on the SQLite file at path and calls row with each
// row's Scan.
func queryRows(t *testing.T, path, query string, row func(scan func(...any) error)) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), query)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		row(rows.Scan)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
