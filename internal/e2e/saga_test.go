package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
	"github.com/portico-gateway/portico/internal/testproc"
)

// TestSaga drives CreateOrder through the three real processes.
func TestSaga(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	tests := []struct {
		name       string
		req        *orderv1.CreateOrderRequest
		wantCode   codes.Code
		wantReason string
		wantStatus orderv1.Order_Status
	}{
		{"happy path", orderReq("keyboard-001", 2, "pm_card_ok"), codes.OK, "", orderv1.Order_STATUS_CONFIRMED},
		{"insufficient stock", orderReq("keyboard-001", 1000, "pm_card_ok"), codes.FailedPrecondition, "INSUFFICIENT_STOCK", 0},
		{"payment declined", orderReq("mouse-001", 1, "pm_card_declined"), codes.FailedPrecondition, "PAYMENT_DECLINED", 0},
		{"insufficient funds", orderReq("mouse-001", 1, "pm_card_insufficient_funds"), codes.FailedPrecondition, "PAYMENT_DECLINED", 0},
		{"unknown sku", orderReq("no-such-sku", 1, "pm_card_ok"), codes.NotFound, "ITEM_NOT_FOUND", 0},
		{"invalid quantity", orderReq("keyboard-001", 0, "pm_card_ok"), codes.InvalidArgument, "", 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := item(t, c, tt.req.Lines[0].Sku)
			o, err := c.Order.CreateOrder(as(t, "alice", "customer", fmt.Sprintf("saga-%d", i)), tt.req)
			if got := status.Code(err); got != tt.wantCode {
				t.Fatalf("CreateOrder() code = %v (%v), want %v", got, err, tt.wantCode)
			}
			if got := rpcerr.Reason(err); got != tt.wantReason {
				t.Errorf("CreateOrder() reason = %q, want %q", got, tt.wantReason)
			}
			after := item(t, c, tt.req.Lines[0].Sku)
			if err != nil {
				if before != nil && after.GetAvailable() != before.GetAvailable() {
					t.Errorf("failed order moved stock: available %d -> %d", before.GetAvailable(), after.GetAvailable())
				}
				return
			}
			if o.GetStatus() != tt.wantStatus {
				t.Fatalf("status = %v, want %v", o.GetStatus(), tt.wantStatus)
			}
			checkConfirmed(t, c, o)
			q := int64(tt.req.Lines[0].Quantity)
			if after.GetAvailable() != before.GetAvailable()-q || after.GetSold() != before.GetSold()+q {
				t.Errorf("stock after = %+v, want available-%d and sold+%d from %+v", after, q, q, before)
			}
		})
	}
}

// checkConfirmed asserts the invariant: CONFIRMED means a committed
// reservation and exactly one captured payment.
func checkConfirmed(t *testing.T, c *cluster, o *orderv1.Order) {
	t.Helper()
	ctx := as(t, "admin", "admin", "")
	r, err := c.Inventory.GetReservation(ctx, &inventoryv1.GetReservationRequest{Id: o.GetReservationId()})
	if err != nil || r.GetState() != inventoryv1.Reservation_STATE_COMMITTED {
		t.Errorf("reservation of %s = %v, %v; want COMMITTED", o.GetId(), r.GetState(), err)
	}
	ps, err := c.Payment.ListPayments(ctx, &paymentv1.ListPaymentsRequest{OrderId: o.GetId()})
	if err != nil {
		t.Fatalf("ListPayments: %v", err)
	}
	captured := 0
	for _, p := range ps.GetPayments() {
		if p.GetStatus() == paymentv1.Payment_STATUS_CAPTURED {
			captured++
		}
	}
	if captured != 1 {
		t.Errorf("order %s has %d captured payments, want 1", o.GetId(), captured)
	}
}

func item(t *testing.T, c *cluster, sku string) *inventoryv1.Item {
	t.Helper()
	it, err := c.Inventory.GetItem(as(t, "admin", "admin", ""), &inventoryv1.GetItemRequest{Sku: sku})
	if status.Code(err) == codes.NotFound {
		return nil
	}
	if err != nil {
		t.Fatalf("GetItem(%s): %v", sku, err)
	}
	return it
}

func TestIdempotentCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	first, err := c.Order.CreateOrder(as(t, "alice", "customer", "k1"), orderReq("keyboard-001", 1, "pm_card_ok"))
	if err != nil {
		t.Fatalf("first CreateOrder: %v", err)
	}
	again, err := c.Order.CreateOrder(as(t, "alice", "customer", "k1"), orderReq("keyboard-001", 1, "pm_card_ok"))
	if err != nil || again.GetId() != first.GetId() {
		t.Fatalf("replay = %v, %v; want order %s", again.GetId(), err, first.GetId())
	}
	_, err = c.Order.CreateOrder(as(t, "alice", "customer", "k1"), orderReq("keyboard-001", 3, "pm_card_ok"))
	if rpcerr.Reason(err) != "IDEMPOTENCY_KEY_REUSED" {
		t.Errorf("same key, different body: %v; want IDEMPOTENCY_KEY_REUSED", err)
	}
	bob, err := c.Order.CreateOrder(as(t, "bob", "customer", "k1"), orderReq("keyboard-001", 1, "pm_card_ok"))
	if err != nil || bob.GetId() == first.GetId() {
		t.Errorf("bob with alice's key = %v, %v; want his own order", bob.GetId(), err)
	}
	checkConfirmed(t, c, first)
}

// TestLastUnits races N orders for the last K units: exactly K confirm.
func TestLastUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	const n, k = 20, 5
	c := startCluster(t)
	admin := as(t, "admin", "admin", "")
	before := item(t, c, "webcam-001")
	_, err := c.Inventory.UpdateItem(admin, &inventoryv1.UpdateItemRequest{
		Item:       &inventoryv1.Item{Sku: "webcam-001", Available: k},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"available"}},
	})
	if err != nil {
		t.Fatalf("UpdateItem: %v", err)
	}
	var wg sync.WaitGroup
	orders := make([]*orderv1.Order, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			orders[i], errs[i] = c.Order.CreateOrder(as(t, "alice", "customer", fmt.Sprintf("last-%d", i)), orderReq("webcam-001", 1, "pm_card_ok"))
		}()
	}
	wg.Wait()
	confirmed := 0
	for i := range n {
		switch {
		case errs[i] == nil && orders[i].GetStatus() == orderv1.Order_STATUS_CONFIRMED:
			confirmed++
			checkConfirmed(t, c, orders[i])
		case rpcerr.Reason(errs[i]) == "INSUFFICIENT_STOCK":
		default:
			t.Errorf("order %d = %v, %v; want CONFIRMED or INSUFFICIENT_STOCK", i, orders[i].GetStatus(), errs[i])
		}
	}
	after := item(t, c, "webcam-001")
	if confirmed != k || after.GetAvailable() != 0 || after.GetReserved() != 0 {
		t.Errorf("confirmed %d, item %+v; want %d confirmed and nothing left", confirmed, after, k)
	}
	if after.GetSold() != before.GetSold()+k {
		t.Errorf("sold = %d, want %d", after.GetSold(), before.GetSold()+k)
	}
}

// TestInventoryDown: no order reported as created, nothing charged, and the
// failure is quick.
func TestInventoryDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	c.inv.Kill()
	start := time.Now()
	o, err := c.Order.CreateOrder(as(t, "alice", "customer", "down-1"), orderReq("keyboard-001", 1, "pm_card_ok"))
	took := time.Since(start)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("CreateOrder with inventory down = %v, %v; want UNAVAILABLE", o, err)
	}
	list, err := c.Order.ListOrders(as(t, "alice", "customer", ""), &orderv1.ListOrdersRequest{})
	if err != nil {
		t.Fatalf("ListOrders: %v", err)
	}
	for _, o := range list.GetOrders() {
		if o.GetStatus() == orderv1.Order_STATUS_CONFIRMED {
			t.Errorf("order %s CONFIRMED while inventory was down", o.GetId())
		}
	}
	t.Logf("UNAVAILABLE after %v", took)
	c.startInventory() // recovery: once order has reconnected, the same key succeeds
	ok := testproc.WaitFor(t.Context(), 10*time.Second, func(context.Context) bool {
		o, err = c.Order.CreateOrder(as(t, "alice", "customer", "down-1"), orderReq("keyboard-001", 1, "pm_card_ok"))
		return status.Code(err) != codes.Unavailable
	})
	if !ok || err != nil || o.GetStatus() != orderv1.Order_STATUS_CONFIRMED {
		t.Fatalf("after restart: %v, %v; want CONFIRMED", o.GetStatus(), err)
	}
	checkConfirmed(t, c, o)
}

// TestRestartKeepsState restarts every service mid-test.
func TestRestartKeepsState(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	o, err := c.Order.CreateOrder(as(t, "alice", "customer", "r1"), orderReq("monitor-001", 1, "pm_card_ok"))
	if err != nil {
		t.Fatalf("CreateOrder: %v", err)
	}
	before := item(t, c, "monitor-001")
	for _, p := range []struct {
		stop  func(time.Duration) error
		start func()
	}{{c.inv.Stop, c.startInventory}, {c.pay.Stop, c.startPayment}, {c.ord.Stop, c.startOrder}} {
		if err := p.stop(10 * time.Second); err != nil {
			t.Errorf("graceful stop: %v", err)
		}
		p.start()
	}
	got, err := c.Order.GetOrder(as(t, "alice", "customer", ""), &orderv1.GetOrderRequest{Id: o.GetId()})
	if err != nil || got.GetStatus() != orderv1.Order_STATUS_CONFIRMED {
		t.Fatalf("after restart GetOrder = %v, %v", got, err)
	}
	if after := item(t, c, "monitor-001"); after.GetAvailable() != before.GetAvailable() || after.GetSold() != before.GetSold() {
		t.Errorf("stock changed across restart: %+v -> %+v", before, after)
	}
	checkConfirmed(t, c, got)
}
