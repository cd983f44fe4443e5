package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
	"github.com/portico-gateway/portico/internal/testproc"
)

// crashLoad is TestSagaCrash's load: n CreateOrder calls, each with its
// own idempotency key, workers at a time, on skus (monitor-001 has 25
// units, so some orders find no stock).
const (
	crashOrders  = 200
	crashWorkers = 16
	crashTries   = 20              // attempts of one call under one key
	crashAttempt = 5 * time.Second // one attempt's deadline
)

var crashSKUs = []string{"monitor-001", "headset-001", "keyboard-001"}

// crashKill is one SIGKILL: of proc once at calls have been answered.
type crashKill struct {
	at   int
	proc string
}

// crashAnswer is the definite answer one key finally got.
type crashAnswer struct {
	orderID string
	status  orderv1.Order_Status // CreateOrder's order, when it succeeded
	err     error
	tries   int
}

// TestSagaCrash kills the order process, payment, inventory and order
// again with SIGKILL while CreateOrder calls are in
// flight, restarts each on its data file, and has every client retry
// under its idempotency key until it gets an answer (an order, or a
// business failure; "no order was created" is retried after its
// RetryInfo delay). Once the reconciler has settled every order:
// each key has one order, each CONFIRMED order one captured payment of its
// total and a committed reservation, each FAILED order no capture, stock
// moved by exactly the CONFIRMED orders, and no payment belongs to an
// order that does not exist. A reservation may be left ACTIVE for its TTL
// (withdrawnHolds) when inventory was down: of a FAILED order whose
// compensating release failed, or of an order withdrawn because inventory
// died between reserving and answering; never COMMITTED.
func TestSagaCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	// Commits take 30ms until inventory's restart, so the first kill of
	// order finds most of its sagas charged but neither committed nor
	// stored; the second, with commits fast, finds some committed but not
	// stored. Both are runs the single final store leaves to the
	// reconciler.
	c := startClusterWith(t, []string{"--faults", "delay=30ms,method=" + inv + "CommitReservation"},
		[]string{"--reconcile-interval", "100ms", "--reconcile-after", "300ms"})
	initial := map[string]*inventoryv1.Item{}
	for _, sku := range crashSKUs {
		initial[sku] = item(t, c, sku)
	}
	kills := []crashKill{{40, "order"}, {90, "payment"}, {120, "inventory"}, {160, "order"}}
	answers := crashRun(t, c, kills)
	retried, pending := 0, 0
	for _, a := range answers {
		retried += a.tries - 1
		if a.err == nil && a.status == orderv1.Order_STATUS_PENDING {
			pending++
		}
	}
	// Calls cut by a kill were retried, and some keys were answered with a
	// PENDING order (a run cut short, or payment down) that only the
	// reconciler can settle: otherwise the test proves nothing.
	if retried == 0 || pending == 0 {
		t.Fatalf("%d retries, %d PENDING answers: the kills missed the sagas", retried, pending)
	}
	orders := waitSettled(t, c)
	t.Logf("%d calls, %d retries, %d answered PENDING; %d orders", crashOrders, retried, pending, len(orders))
	checkCrashOrders(t, c, orders)
	checkCrashStock(t, c, initial, orders)
	for _, p := range []*testproc.Proc{c.ord, c.pay, c.inv} {
		if err := p.Stop(10 * time.Second); err != nil {
			t.Errorf("stop %s: %v", p.Name, err)
		}
	}
	checkCrashKeys(t, c, answers, orders)
	checkCrashOrphans(t, c, orders)
}

// crashReq is call i's request: a SKU, 1-3 units, one in four declined.
func crashReq(i int) *orderv1.CreateOrderRequest {
	method := "pm_card_ok"
	if i%4 == 3 {
		method = "pm_card_declined"
	}
	return orderReq(crashSKUs[i%len(crashSKUs)], int32(1+i%3), method)
}

func crashKey(i int) string { return fmt.Sprintf("crash-%d", i) }

// crashRun sends the load and, on the test's goroutine, kills and
// restarts the processes in kills as the answers come in.
func crashRun(t *testing.T, c *cluster, kills []crashKill) []crashAnswer {
	answers := make([]crashAnswer, crashOrders)
	answered := make(chan struct{}, crashOrders) // one send per call, answered or given up
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range crashWorkers {
		wg.Go(func() {
			for i := range jobs {
				answers[i] = createUntilAnswered(t.Context(), c, crashKey(i), crashReq(i))
				answered <- struct{}{}
			}
		})
	}
	go func() {
		defer close(jobs)
		for i := range crashOrders {
			jobs <- i
		}
	}()
	n := 0
	for _, k := range kills {
		for ; n < k.at; n++ {
			<-answered
		}
		crashRestart(c, k.proc)
	}
	wg.Wait()
	return answers
}

// crashRestart SIGKILLs proc and starts it again on its data file.
func crashRestart(c *cluster, proc string) {
	switch proc {
	case "order":
		c.ord.Kill()
		c.startOrder()
	case "payment":
		c.pay.Kill()
		c.startPayment()
	case "inventory":
		c.inv.Kill()
		c.invExtra = nil // back without its faults
		c.startInventory()
	default:
		c.t.Fatalf("crashRestart: unknown process %q", proc)
	}
}

// createUntilAnswered calls CreateOrder under key, as a client would,
// until it gets an answer other than "the service was not there" (bounded
// by crashTries attempts of crashAttempt each).
func createUntilAnswered(ctx context.Context, c *cluster, key string, req *orderv1.CreateOrderRequest) crashAnswer {
	var a crashAnswer
	for a.tries < crashTries {
		a.tries++
		actx, cancel := context.WithTimeout(ctx, crashAttempt)
		actx = metadata.AppendToOutgoingContext(actx, "x-portico-subject", "alice", "x-portico-role", "customer", "idempotency-key", key)
		o, err := c.Order.CreateOrder(actx, req, grpc.WaitForReady(true))
		cancel()
		if lost(err) && ctx.Err() == nil {
			continue
		}
		if rpcerr.Reason(err) == "INVENTORY_UNAVAILABLE" && ctx.Err() == nil {
			// No order was created: retry under the same key after the
			// RetryInfo delay, as a client honouring Retry-After does.
			waitRetryDelay(ctx, err)
			continue
		}
		a.err, a.orderID, a.status = err, o.GetId(), o.GetStatus()
		if info := rpcerr.ErrorInfo(err); info != nil {
			a.orderID = info.GetMetadata()["orderId"]
		}
		return a
	}
	a.err = fmt.Errorf("no answer after %d tries", a.tries)
	return a
}

// waitRetryDelay waits the RetryInfo delay of err (at most 2s) or until
// ctx ends.
func waitRetryDelay(ctx context.Context, err error) {
	d := time.Second
	for _, det := range status.Convert(err).Details() {
		if ri, ok := det.(*errdetails.RetryInfo); ok {
			d = min(ri.GetRetryDelay().AsDuration(), 2*time.Second)
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// lost reports whether err says the call did not get through (the process
// died or was not back yet), not what happened to the order.
func lost(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable:
		return rpcerr.Reason(err) == ""
	case codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}

// waitSettled waits (bounded) until every order has left PENDING and
// returns them by id.
func waitSettled(t *testing.T, c *cluster) map[string]*orderv1.Order {
	t.Helper()
	var orders map[string]*orderv1.Order
	var pending int
	ok := testproc.WaitFor(t.Context(), 30*time.Second, func(ctx context.Context) bool {
		if got, n := listAll(ctx, c); got != nil { // keep the last full read
			orders, pending = got, n
		}
		return orders != nil && pending == 0
	})
	if !ok {
		t.Fatalf("%d of %d orders still PENDING after 30s", pending, len(orders))
	}
	return orders
}

// listAll reads every order of alice's, page after page, and counts the
// PENDING ones; nil when a read fails.
func listAll(ctx context.Context, c *cluster) (map[string]*orderv1.Order, int) {
	ctx = metadata.AppendToOutgoingContext(ctx, "x-portico-subject", "alice", "x-portico-role", "customer")
	orders := map[string]*orderv1.Order{}
	pending := 0
	req := &orderv1.ListOrdersRequest{PageSize: 100}
	for range crashOrders/100 + 2 { // bounded: more pages than the orders need
		resp, err := c.Order.ListOrders(ctx, req)
		if err != nil {
			return nil, 0
		}
		for _, o := range resp.GetOrders() {
			orders[o.GetId()] = o
			if o.GetStatus() == orderv1.Order_STATUS_PENDING {
				pending++
			}
		}
		if req.PageToken = resp.GetNextPageToken(); req.PageToken == "" {
			return orders, pending
		}
	}
	return nil, 0
}
