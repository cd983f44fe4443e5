package order

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/pgtest"
)

// replica is one more order Service on the harness's PostgreSQL database
// and dependencies, as another process would be.
type replica struct {
	svc    *Service
	store  *PostgresStore
	client orderv1.OrderServiceClient
}

func (h *harness) replica(lease Lease) *replica {
	h.t.Helper()
	store, err := OpenPostgres(context.Background(), h.dbPath, lease)
	if err != nil {
		h.t.Fatalf("OpenPostgres: %v", err)
	}
	h.t.Cleanup(func() { store.Close() })
	svc, err := New(store, inventoryv1.NewInventoryServiceClient(h.invConn), paymentv1.NewPaymentServiceClient(h.payConn), h.opts...)
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	conn, _ := serve(h.t, func(s *grpc.Server) { orderv1.RegisterOrderServiceServer(s, svc) })
	return &replica{svc: svc, store: store, client: orderv1.NewOrderServiceClient(conn)}
}

// TestReplicasOneKey: 30 calls with one key spread over three replicas make
// one order, one reservation and one charge, and every call answers that
// order CONFIRMED: the replicas not running it wait on the database.
func TestReplicasOneKey(t *testing.T) {
	const calls = 30
	h := newHarnessDB(t, pgtest.New(t))
	h.invStub.set(func(k *invHooks) {
		k.reserve = func(ctx context.Context, r *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
			select { // widen the window in which the other calls arrive
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
			}
			return h.inv.ReserveStock(ctx, r)
		}
	})
	rs := []orderv1.OrderServiceClient{h.client, h.replica(Lease{}).client, h.replica(Lease{}).client}
	orders := make([]*orderv1.Order, calls)
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		ctx := alice(t, "same-key")
		wg.Go(func() { orders[i], errs[i] = rs[i%len(rs)].CreateOrder(ctx, orderReq("pm_card_ok", "keyboard-001", 1)) })
	}
	wg.Wait()
	for i := range calls {
		if errs[i] != nil || orders[i].GetId() != orders[0].GetId() || orders[i].GetStatus() != orderv1.Order_STATUS_CONFIRMED {
			t.Errorf("call %d = %v %v, %v; want CONFIRMED %s", i, orders[i].GetId(), orders[i].GetStatus(), errs[i], orders[0].GetId())
		}
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
}

// TestReplicasReconcileOneAtATime: orders left PENDING by a dead replica
// (its leases lapsed) are driven by exactly one of three replicas
// reconciling at once, and settle.
func TestReplicasReconcileOneAtATime(t *testing.T) {
	const n = 10
	h := newHarnessDB(t, pgtest.New(t), WithReconcileAfter(0))
	dead, err := OpenPostgres(context.Background(), h.dbPath, Lease{Owner: "dead", TTL: time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	for i := range n {
		if _, err := dead.Create(context.Background(), h.svc.newRecord("alice", fmt.Sprint("k", i), orderReq("pm_card_ok", "keyboard-001", 1))); err != nil {
			t.Fatal(err)
		}
	}
	rs := []*Service{h.svc, h.replica(Lease{}).svc, h.replica(Lease{}).svc}
	settled := make([]int, len(rs))
	var wg sync.WaitGroup
	for i, s := range rs {
		wg.Go(func() {
			var err error
			if settled[i], err = s.Reconcile(context.Background()); err != nil {
				t.Errorf("replica %d Reconcile: %v", i, err)
			}
		})
	}
	wg.Wait()
	total := 0
	for _, n := range settled {
		total += n
	}
	if total != n {
		t.Errorf("replicas settled %v orders, want %d in all", settled, n)
	}
	if got := h.invStub.reserves.Load(); got != n {
		t.Errorf("ReserveStock calls = %d, want %d: one run per order", got, n)
	}
	for _, r := range h.stored() {
		if r.Order.GetStatus() != orderv1.Order_STATUS_CONFIRMED {
			t.Errorf("order %s = %v, want CONFIRMED", r.Order.GetId(), r.Order.GetStatus())
		}
	}
}
