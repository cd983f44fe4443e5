package inventory

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/grpctest"
	"github.com/portico-gateway/portico/internal/pgtest"
	"github.com/portico-gateway/portico/internal/sqlitedb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is when a testing/synctest bubble's clock starts: tests that check
// the service's time stamps, or move time, run in a bubble.
var t0 = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

const testTTL = 5 * time.Minute

// fixture is a Service on a store behind a real gRPC transport.
type fixture struct {
	client inventoryv1.InventoryServiceClient
	svc    *Service
	store  backend
}

// backends runs test once per store backend, as a subtest named for it,
// with the --db value of a fresh database: an SQLite file, and a PostgreSQL
// database of its own (skipped, saying so, when DATABASE_URL is unset).
func backends(t *testing.T, test func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) { test(t, filepath.Join(t.TempDir(), "inventory.db")) })
	t.Run("postgres", func(t *testing.T) { test(t, pgtest.New(t)) })
}

// testItems is the small catalogue most tests start with.
func testItems() []Item {
	return []Item{
		{SKU: "keyboard-001", Name: "Keyboard", Price: Money{4999, "USD"}, Stock: Stock{Available: 10}, UpdateTime: t0},
		{SKU: "mouse-001", Name: "Mouse", Price: Money{2499, "USD"}, Stock: Stock{Available: 5}, UpdateTime: t0},
		{SKU: "gone-001", Name: "Sold out", Price: Money{100, "EUR"}, Stock: Stock{Available: 0}, UpdateTime: t0},
	}
}

// newFixture serves a Service on the database db names (an SQLite path,
// sqlitedb.Memory when empty, or a PostgreSQL URL) seeded with items.
func newFixture(t *testing.T, db string, items []Item) *fixture {
	t.Helper()
	if db == "" {
		db = sqlitedb.Memory
	}
	store, err := open(t.Context(), db)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.Seed(t.Context(), items); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	svc, err := New(store, WithReservationTTL(testTTL))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := grpc.NewServer()
	inventoryv1.RegisterInventoryServiceServer(srv, svc)
	return &fixture{client: inventoryv1.NewInventoryServiceClient(grpctest.Serve(t, srv)), svc: svc, store: store}
}

// ctx returns a context for one call, bounded by grpctest.Timeout.
func ctx(t *testing.T) context.Context { return grpctest.Context(t) }

// as returns ctx carrying principal metadata with role.
func as(t *testing.T, role string) context.Context {
	return metadata.AppendToOutgoingContext(ctx(t), callmeta.SubjectKey, "tester", callmeta.RoleKey, role)
}

// checkErr fails unless err has code and ErrorInfo reason ("" for none)
// in Domain.
func checkErr(t *testing.T, call string, err error, code codes.Code, reason string) {
	t.Helper()
	grpctest.CheckError(t, call, err, code, Domain, reason)
}

// badFields returns the BadRequest field names of err, in order.
var badFields = grpctest.BadFields

// echoes reports whether err's message or ErrorInfo metadata contains s.
var echoes = grpctest.Echoes

// getItem returns an item or fails the test.
func (f *fixture) getItem(t *testing.T, sku string) *inventoryv1.Item {
	t.Helper()
	it, err := f.client.GetItem(ctx(t), &inventoryv1.GetItemRequest{Sku: sku})
	if err != nil {
		t.Fatalf("GetItem(%s): %v", sku, err)
	}
	return it
}

// stock returns an item's buckets.
func (f *fixture) stock(t *testing.T, sku string) Stock {
	t.Helper()
	it := f.getItem(t, sku)
	return Stock{it.GetAvailable(), it.GetReserved(), it.GetSold()}
}

func line(sku string, q int32) *inventoryv1.Line { return &inventoryv1.Line{Sku: sku, Quantity: q} }

func (f *fixture) reserve(t *testing.T, order string, lines ...*inventoryv1.Line) *inventoryv1.Reservation {
	t.Helper()
	r, err := f.client.ReserveStock(ctx(t), &inventoryv1.ReserveStockRequest{OrderId: order, Lines: lines})
	if err != nil {
		t.Fatalf("ReserveStock(%s): %v", order, err)
	}
	return r
}
