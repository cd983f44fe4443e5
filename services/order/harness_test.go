package order

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/pgtest"
	"github.com/portico-gateway/portico/internal/sqlitedb"
)

// invHooks has one function per inventory RPC; the stub calls them.
type invHooks struct {
	reserve func(context.Context, *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error)
	commit  func(context.Context, *inventoryv1.CommitReservationRequest) (*inventoryv1.Reservation, error)
	release func(context.Context, *inventoryv1.ReleaseReservationRequest) (*inventoryv1.Reservation, error)
}

// invStub is an inventory server whose RPCs are swappable functions
// (grpc-go's stub server style), defaulting to the fake.
type invStub struct {
	inventoryv1.UnimplementedInventoryServiceServer
	mu       sync.Mutex
	h        invHooks
	reserves atomic.Int32
}

func (s *invStub) set(f func(*invHooks)) { s.mu.Lock(); defer s.mu.Unlock(); f(&s.h) }
func (s *invStub) hooks() invHooks       { s.mu.Lock(); defer s.mu.Unlock(); return s.h }

func (s *invStub) ReserveStock(ctx context.Context, r *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
	s.reserves.Add(1)
	return s.hooks().reserve(ctx, r)
}

func (s *invStub) CommitReservation(ctx context.Context, r *inventoryv1.CommitReservationRequest) (*inventoryv1.Reservation, error) {
	return s.hooks().commit(ctx, r)
}

func (s *invStub) ReleaseReservation(ctx context.Context, r *inventoryv1.ReleaseReservationRequest) (*inventoryv1.Reservation, error) {
	return s.hooks().release(ctx, r)
}

type payHooks struct {
	create func(context.Context, *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error)
	refund func(context.Context, *paymentv1.RefundPaymentRequest) (*paymentv1.Payment, error)
	list   func(context.Context, *paymentv1.ListPaymentsRequest) (*paymentv1.ListPaymentsResponse, error)
}

type payStub struct {
	paymentv1.UnimplementedPaymentServiceServer
	mu      sync.Mutex
	h       payHooks
	creates atomic.Int32
	refunds atomic.Int32
}

func (s *payStub) set(f func(*payHooks)) { s.mu.Lock(); defer s.mu.Unlock(); f(&s.h) }
func (s *payStub) hooks() payHooks       { s.mu.Lock(); defer s.mu.Unlock(); return s.h }

func (s *payStub) CreatePayment(ctx context.Context, r *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
	s.creates.Add(1)
	return s.hooks().create(ctx, r)
}

func (s *payStub) RefundPayment(ctx context.Context, r *paymentv1.RefundPaymentRequest) (*paymentv1.Payment, error) {
	s.refunds.Add(1)
	return s.hooks().refund(ctx, r)
}

func (s *payStub) ListPayments(ctx context.Context, r *paymentv1.ListPaymentsRequest) (*paymentv1.ListPaymentsResponse, error) {
	return s.hooks().list(ctx, r)
}

// serve starts a gRPC server on bufconn and returns a client connection and
// a function that stops the server (idempotent; also run at cleanup).
func serve(t *testing.T, register func(*grpc.Server)) (*grpc.ClientConn, func()) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	register(srv)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	stop := sync.OnceFunc(func() { srv.Stop(); <-done })
	t.Cleanup(func() { conn.Close(); stop() })
	return conn, stop
}

// harness is the order service on bufconn with stub inventory and payment
// servers in front of in-memory fakes. Tests in which time must pass build
// it inside a testing/synctest bubble and move time with time.Sleep.
type harness struct {
	t             *testing.T
	inv           *fakeInventory
	pay           *fakePayments
	invStub       *invStub
	payStub       *payStub
	stopInventory func()
	invConn       *grpc.ClientConn
	payConn       *grpc.ClientConn
	dbPath        string
	store         backend
	lease         Lease // on PostgreSQL
	svc           *Service
	client        orderv1.OrderServiceClient
	stopOrder     func()
	opts          []Option // extra options of every Service start builds
}

// newHarness builds the harness on an in-memory database; opts are added
// to the Service's options.
func newHarness(t *testing.T, opts ...Option) *harness {
	return newHarnessDB(t, sqlitedb.Memory, opts...)
}

// backends runs test once per store backend, as a subtest named for it,
// with the --db value of a fresh database: an SQLite file, and a PostgreSQL
// database of its own (skipped, saying so, when DATABASE_URL is unset).
func backends(t *testing.T, test func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) { test(t, filepath.Join(t.TempDir(), "order.db")) })
	t.Run("postgres", func(t *testing.T) { test(t, pgtest.New(t)) })
}

// newHarnessFile builds the harness on a database file, for restarts.
func newHarnessFile(t *testing.T) *harness {
	return newHarnessDB(t, filepath.Join(t.TempDir(), "order.db"))
}

func newHarnessDB(t *testing.T, path string, opts ...Option) *harness {
	t.Helper()
	h := &harness{t: t,
		inv: newFakeInventory(), pay: newFakePayments(), invStub: &invStub{}, payStub: &payStub{}, dbPath: path, opts: opts}
	h.invStub.h = invHooks{reserve: h.inv.ReserveStock, commit: h.inv.CommitReservation, release: h.inv.ReleaseReservation}
	h.payStub.h = payHooks{create: h.pay.CreatePayment, refund: h.pay.RefundPayment, list: h.pay.ListPayments}
	h.invConn, h.stopInventory = serve(t, func(s *grpc.Server) { inventoryv1.RegisterInventoryServiceServer(s, h.invStub) })
	h.payConn, _ = serve(t, func(s *grpc.Server) { paymentv1.RegisterPaymentServiceServer(s, h.payStub) })
	h.start()
	return h
}

// start opens the store and serves a new Service on it.
func (h *harness) start() {
	h.t.Helper()
	store, err := open(context.Background(), h.dbPath, h.lease)
	if err != nil {
		h.t.Fatalf("open: %v", err)
	}
	h.store = store
	h.svc, err = New(store, inventoryv1.NewInventoryServiceClient(h.invConn), paymentv1.NewPaymentServiceClient(h.payConn), h.opts...)
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	var conn *grpc.ClientConn
	conn, h.stopOrder = serve(h.t, func(s *grpc.Server) { orderv1.RegisterOrderServiceServer(s, h.svc) })
	h.client = orderv1.NewOrderServiceClient(conn)
	h.t.Cleanup(func() { store.Close() })
}

// restart stops the order server, closes the database and starts afresh on
// the same file, as a process restart does.
func (h *harness) restart() {
	h.t.Helper()
	h.stopOrder()
	if err := h.store.Close(); err != nil {
		h.t.Fatalf("close store: %v", err)
	}
	h.start()
}

// as returns a context calling as subject with role and, when key is not
// empty, an idempotency key; it ends after 5s.
func as(t *testing.T, subject, role, key string) context.Context {
	return asWithin(t, 5*time.Second, subject, role, key)
}

func asWithin(t *testing.T, d time.Duration, subject, role, key string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	var kv []string
	if subject != "" {
		kv = append(kv, "x-portico-subject", subject, "x-portico-role", role)
	}
	if key != "" {
		kv = append(kv, "idempotency-key", key)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

func alice(t *testing.T, key string) context.Context { return as(t, "alice", "customer", key) }

func orderReq(method string, skuQty ...any) *orderv1.CreateOrderRequest {
	req := &orderv1.CreateOrderRequest{PaymentMethod: method}
	for i := 0; i+1 < len(skuQty); i += 2 {
		req.Lines = append(req.Lines, &orderv1.OrderLine{Sku: skuQty[i].(string), Quantity: int32(skuQty[i+1].(int))})
	}
	return req
}

// stored returns every stored order, newest first.
func (h *harness) stored() []*Record {
	h.t.Helper()
	recs, err := h.store.List(context.Background(), ListQuery{Limit: 1000})
	if err != nil {
		h.t.Fatalf("List: %v", err)
	}
	return recs
}

// get returns one stored order.
func (h *harness) get(id string) *Record {
	h.t.Helper()
	r, err := h.store.Get(context.Background(), id)
	if err != nil {
		h.t.Fatalf("store.Get(%s): %v", id, err)
	}
	return r
}

// blockUntilDone is a handler body that never answers: it waits for the
// call's context, simulating a dependency that times out.
func blockUntilDone(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}
