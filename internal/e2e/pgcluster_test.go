package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/cpushare"
	"github.com/portico-gateway/portico/internal/pgtest"
	"github.com/portico-gateway/portico/internal/rpcerr"
	"github.com/portico-gateway/portico/internal/testproc"
)

// The reconciler's window in these tests: a dead order replica's orders
// pass to another after pgLease, checked every pgInterval.
const (
	pgLease    = "2s"
	pgInterval = "200ms"
	pgAfter    = "500ms"
	// pgWindow bounds the wait for every order to settle after a burst:
	// the lease, a few reconcile rounds and a saga run.
	pgWindow = 20 * time.Second
)

// replicaSet is n processes of one service on their own ports.
type replicaSet struct {
	service string
	addrs   []string
	procs   []*testproc.Proc
	args    func(k int) []string
	env     []string // added to testproc.Env's
}

func (r *replicaSet) start(t testing.TB, k int) {
	t.Helper()
	r.procs[k] = testproc.StartEnv(t, bin, fmt.Sprintf("%s-%d", r.service, k), append(testproc.Env(t), r.env...), r.args(k)...)
	testproc.WaitServing(t, r.procs[k], r.addrs[k])
}

// pgCluster is the three services as real processes on one PostgreSQL
// database of its own, with several replicas of each.
type pgCluster struct {
	db            string
	pool          *pgxpool.Pool // the test's own view of the database
	inv, pay, ord *replicaSet
	Orders        []orderv1.OrderServiceClient // one per order replica
	Inventory     inventoryv1.InventoryServiceClient
}

func newReplicaSet(t testing.TB, service string, n int, args func(k int, addr string) []string) *replicaSet {
	r := &replicaSet{service: service, procs: make([]*testproc.Proc, n)}
	for range n {
		r.addrs = append(r.addrs, testproc.Addr(testproc.FreePort(t)))
	}
	r.args = func(k int) []string { return args(k, r.addrs[k]) }
	return r
}

func startPGCluster(t testing.TB, invN, payN, ordN int) *pgCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := &pgCluster{db: pgtest.New(t)}
	c.inv = newReplicaSet(t, "inventory", invN, func(_ int, addr string) []string {
		return []string{"inventory", "--listen", addr, "--db", c.db}
	})
	c.pay = newReplicaSet(t, "payment", payN, func(_ int, addr string) []string {
		return []string{"payment", "--listen", addr, "--db", c.db}
	})
	c.ord = newReplicaSet(t, "order", ordN, func(_ int, addr string) []string {
		return []string{"order", "--listen", addr, "--db", c.db,
			"--inventory", strings.Join(c.inv.addrs, ","), "--payment", strings.Join(c.pay.addrs, ","),
			"--lease-ttl", pgLease, "--reconcile-interval", pgInterval, "--reconcile-after", pgAfter}
	})
	// A cluster with replicas shares the host's cores among its processes
	// as `portico dev --replicas` does (cpushare); a single set keeps the
	// runtime's default, as plain `portico dev --postgres` does.
	var share []string
	if n := invN + payN + ordN; n > 3 {
		if kv, ok := cpushare.Var(os.Environ(), n); ok {
			share = []string{kv}
		}
	}
	for _, r := range []*replicaSet{c.inv, c.pay, c.ord} {
		r.env = share
		for k := range r.procs {
			r.start(t, k)
		}
	}
	for _, a := range c.ord.addrs {
		c.Orders = append(c.Orders, orderv1.NewOrderServiceClient(testproc.Dial(t, a, signed)))
	}
	c.Inventory = inventoryv1.NewInventoryServiceClient(testproc.Dial(t, c.inv.addrs[0], signed))
	var err error
	if c.pool, err = pgxpool.New(context.Background(), c.db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.pool.Close)
	return c
}

// setStock sets sku's available units through the inventory service.
func (c *pgCluster) setStock(t testing.TB, sku string, units int64) {
	t.Helper()
	_, err := c.Inventory.UpdateItem(as(t, "admin", "admin", ""), &inventoryv1.UpdateItemRequest{
		Item: &inventoryv1.Item{Sku: sku, Available: units}, UpdateMask: fieldMask("available"),
	})
	if err != nil {
		t.Fatalf("UpdateItem(%s): %v", sku, err)
	}
}

// retryPause is the client's backoff step between attempts of one order.
const retryPause = 250 * time.Millisecond

// create calls CreateOrder with key on replica i, and on the next replicas
// while the answer is a transport failure (the replica died, a connection
// broke), up to attempts calls: a client retrying with its key, as the
// idempotency contract allows.
func (c *pgCluster) create(t *testing.T, i int, subject, key string, req *orderv1.CreateOrderRequest, attempts int) (*orderv1.Order, error) {
	var o *orderv1.Order
	var err error
	for a := range attempts {
		if a > 0 {
			time.Sleep(time.Duration(a) * retryPause) // a client's backoff: lets ejection and breakers settle
		}
		o, err = c.Orders[(i+a)%len(c.Orders)].CreateOrder(as(t, subject, "customer", key), req)
		switch status.Code(err) {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Unknown, codes.Canceled:
			continue
		}
		if err == nil && o.GetStatus() == orderv1.Order_STATUS_PENDING {
			continue // settled later by a reconciler; ask again
		}
		return o, err
	}
	return o, err
}

// checkSettled waits (up to pgWindow) until no order is PENDING, then checks
// the invariants in the database itself: a CONFIRMED order has a COMMITTED
// reservation and exactly one CAPTURED payment; a FAILED one has neither
// a COMMITTED reservation nor an unrefunded capture; no capture belongs to
// a FAILED or unknown order; no customer's key has two orders; and sold stock is
// what the committed reservations hold. It returns the status counts.
func (c *pgCluster) checkSettled(t *testing.T, soldBefore map[string]int64) map[string]int {
	t.Helper()
	ctx := context.Background()
	var pending int
	ok := testproc.WaitFor(ctx, pgWindow, func(ctx context.Context) bool {
		err := c.pool.QueryRow(ctx, `SELECT count(*) FROM orders.orders WHERE status = 'STATUS_PENDING'`).Scan(&pending)
		return err == nil && pending == 0
	})
	if !ok {
		t.Errorf("%d orders still PENDING %v after the burst, want none", pending, pgWindow)
	}
	checks := []struct{ name, sql string }{
		{"CONFIRMED without a COMMITTED reservation", `SELECT o.id FROM orders.orders o
			LEFT JOIN inventory.reservations r ON r.order_id = o.id
			WHERE o.status = 'STATUS_CONFIRMED' AND (r.state IS NULL OR r.state <> 'COMMITTED')`},
		{"CONFIRMED without exactly one capture", `SELECT o.id FROM orders.orders o
			WHERE o.status = 'STATUS_CONFIRMED' AND (SELECT count(*) FROM payment.payments p
			WHERE p.order_id = o.id AND p.status = 'CAPTURED') <> 1`},
		{"FAILED with a COMMITTED reservation", `SELECT o.id FROM orders.orders o
			JOIN inventory.reservations r ON r.order_id = o.id
			WHERE o.status = 'STATUS_FAILED' AND r.state = 'COMMITTED'`},
		// A capture of a still PENDING order is the saga mid-way; the
		// PENDING check above reports those orders already.
		{"unrefunded capture of a FAILED or unknown order", `SELECT p.id FROM payment.payments p
			LEFT JOIN orders.orders o ON o.id = p.order_id
			WHERE p.status = 'CAPTURED' AND (o.status IS NULL OR o.status = 'STATUS_FAILED')`},
		{"key with two orders", `SELECT customer || '/' || idempotency_key FROM orders.orders
			GROUP BY customer, idempotency_key HAVING count(*) > 1`},
		{"two reservations of one order", `SELECT order_id FROM inventory.reservations GROUP BY order_id HAVING count(*) > 1`},
	}
	for _, ch := range checks {
		rows, err := c.pool.Query(ctx, ch.sql)
		if err != nil {
			t.Fatalf("%s: %v", ch.name, err)
		}
		var bad []string
		for rows.Next() {
			var id string
			_ = rows.Scan(&id)
			bad = append(bad, id)
		}
		rows.Close()
		if len(bad) > 0 {
			t.Errorf("%s: %v", ch.name, bad)
		}
	}
	for sku, before := range soldBefore {
		var sold, committed int64
		err := c.pool.QueryRow(ctx, `SELECT i.sold, COALESCE((SELECT sum(l.quantity) FROM inventory.reservation_lines l
			JOIN inventory.reservations r ON r.id = l.reservation_id WHERE l.sku = i.sku AND r.state = 'COMMITTED'), 0)
			FROM inventory.items i WHERE i.sku = $1`, sku).Scan(&sold, &committed)
		if err != nil || sold-before != committed {
			t.Errorf("%s: sold %d (from %d), committed reservations hold %d, %v; want equal", sku, sold, before, committed, err)
		}
	}
	counts := map[string]int{}
	rows, err := c.pool.Query(ctx, `SELECT status, count(*) FROM orders.orders GROUP BY status`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var n int
		_ = rows.Scan(&s, &n)
		counts[s] = n
	}
	return counts
}

func (c *pgCluster) sold(t *testing.T, skus ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, s := range skus {
		var n int64
		if err := c.pool.QueryRow(context.Background(), `SELECT sold FROM inventory.items WHERE sku = $1`, s).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[s] = n
	}
	return out
}

// TestPGSagaInvariants: the saga's invariants hold with three order
// replicas and two inventory replicas on one PostgreSQL database.
func TestPGSagaInvariants(t *testing.T) {
	c := startPGCluster(t, 2, 1, 3)
	t.Run("last units", func(t *testing.T) {
		const n, k = 20, 5
		c.setStock(t, "webcam-001", k)
		before := c.sold(t, "webcam-001")
		var wg sync.WaitGroup
		orders, errs := make([]*orderv1.Order, n), make([]error, n)
		for i := range n {
			wg.Go(func() {
				orders[i], errs[i] = c.Orders[i%len(c.Orders)].CreateOrder(as(t, "alice", "customer", fmt.Sprint("last-", i)), orderReq("webcam-001", 1, "pm_card_ok"))
			})
		}
		wg.Wait()
		confirmed := 0
		for i := range n {
			switch {
			case errs[i] == nil && orders[i].GetStatus() == orderv1.Order_STATUS_CONFIRMED:
				confirmed++
			case reasonOf(errs[i]) == "INSUFFICIENT_STOCK":
			default:
				t.Errorf("order %d = %v, %v; want CONFIRMED or INSUFFICIENT_STOCK", i, orders[i].GetStatus(), errs[i])
			}
		}
		if confirmed != k {
			t.Errorf("confirmed %d, want %d", confirmed, k)
		}
		c.checkSettled(t, before)
	})
	t.Run("one key x30", func(t *testing.T) {
		const n = 30
		before := c.sold(t, "keyboard-001")
		var wg sync.WaitGroup
		orders, errs := make([]*orderv1.Order, n), make([]error, n)
		for i := range n {
			wg.Go(func() {
				orders[i], errs[i] = c.Orders[i%len(c.Orders)].CreateOrder(as(t, "alice", "customer", "one-key"), orderReq("keyboard-001", 1, "pm_card_ok"))
			})
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil || orders[i].GetId() != orders[0].GetId() || orders[i].GetStatus() != orderv1.Order_STATUS_CONFIRMED {
				t.Errorf("call %d = %v %v, %v; want CONFIRMED %s", i, orders[i].GetId(), orders[i].GetStatus(), errs[i], orders[0].GetId())
			}
		}
		if after := c.sold(t, "keyboard-001"); after["keyboard-001"] != before["keyboard-001"]+1 {
			t.Errorf("keyboard sold %d -> %d, want one more", before["keyboard-001"], after["keyboard-001"])
		}
		c.checkSettled(t, before)
	})
	t.Run("key reuse", func(t *testing.T) {
		first, err := c.Orders[0].CreateOrder(as(t, "alice", "customer", "reuse"), orderReq("mouse-001", 1, "pm_card_ok"))
		if err != nil {
			t.Fatalf("first: %v", err)
		}
		for i := range c.Orders {
			_, err := c.Orders[i].CreateOrder(as(t, "alice", "customer", "reuse"), orderReq("mouse-001", 3, "pm_card_ok"))
			if reasonOf(err) != "IDEMPOTENCY_KEY_REUSED" {
				t.Errorf("replica %d, same key, other body: %v; want IDEMPOTENCY_KEY_REUSED", i, err)
			}
		}
		bob, err := c.Orders[2].CreateOrder(as(t, "bob", "customer", "reuse"), orderReq("mouse-001", 1, "pm_card_ok"))
		if err != nil || bob.GetId() == first.GetId() {
			t.Errorf("bob with alice's key = %v, %v; want his own order", bob.GetId(), err)
		}
	})
}

// burst runs n orders with unique keys from workers goroutines, spread over
// the order replicas, each retried on transport failures; at done(k) calls
// of the burst (k = 1, 2, ...) it runs hooks[k-1] in the driving goroutine.
// It returns how many calls ended in an error.
func (c *pgCluster) burst(t *testing.T, name string, n, workers int, at map[int]func()) int {
	t.Helper()
	jobs := make(chan int)
	var mu sync.Mutex
	failed, done := 0, 0
	var wg sync.WaitGroup
	progress := make(chan int, n)
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				sku := []string{"keyboard-001", "mouse-001"}[i%2]
				_, err := c.create(t, i, "alice", fmt.Sprintf("%s-%d", name, i), orderReq(sku, 1, "pm_card_ok"), 6)
				if err != nil && reasonOf(err) != "INSUFFICIENT_STOCK" {
					mu.Lock()
					failed++
					mu.Unlock()
					t.Logf("order %d: %v", i, err)
				}
				progress <- 1
			}
		})
	}
	go func() {
		defer close(jobs)
		for i := range n {
			jobs <- i
		}
	}()
	for range n {
		<-progress
		done++
		if f := at[done]; f != nil {
			f()
		}
	}
	wg.Wait()
	return failed
}

// TestPGKillReplicas: kill -9 one replica of each service during a burst
// and restart it: every order ends CONFIRMED or FAILED with money and
// stock consistent, none PENDING after the reconciler's window, none
// doubled.
func TestPGKillReplicas(t *testing.T) {
	c := startPGCluster(t, 2, 2, 3)
	before := c.sold(t, "keyboard-001", "mouse-001")
	kill := func() {
		for _, r := range []*replicaSet{c.inv, c.pay, c.ord} {
			r.procs[1].Kill()
		}
	}
	restart := func() {
		for _, r := range []*replicaSet{c.inv, c.pay, c.ord} {
			r.start(t, 1)
		}
	}
	const n = 60
	failed := c.burst(t, "kill", n, 6, map[int]func(){15: kill, 35: restart})
	counts := c.checkSettled(t, before)
	t.Logf("%d orders: %v; %d calls failed after retries", n, counts, failed)
	if counts["STATUS_CONFIRMED"]+counts["STATUS_FAILED"] == 0 {
		t.Errorf("no order settled")
	}
}

// TestPGLostConnections: every connection to the database is terminated
// (pg_terminate_backend, as a server restart would) three times during a
// burst: orders still settle consistently, none PENDING, none doubled.
func TestPGLostConnections(t *testing.T) {
	c := startPGCluster(t, 1, 1, 2)
	before := c.sold(t, "keyboard-001", "mouse-001")
	cut := func() { t.Logf("terminated %d backends", pgtest.Terminate(t, c.db)) }
	const n = 40
	failed := c.burst(t, "cut", n, 4, map[int]func(){8: cut, 20: cut, 32: cut})
	counts := c.checkSettled(t, before)
	t.Logf("%d orders: %v; %d calls failed after retries", n, counts, failed)
	if failed > n/4 {
		t.Errorf("%d of %d calls failed, want errors bounded to a few", failed, n)
	}
}

func fieldMask(paths ...string) *fieldmaskpb.FieldMask { return &fieldmaskpb.FieldMask{Paths: paths} }

// reasonOf is err's ErrorInfo reason, "" for none.
func reasonOf(err error) string { return rpcerr.Reason(err) }
