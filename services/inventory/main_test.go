package inventory

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
	"github.com/portico-gateway/portico/internal/sqlitedb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is when a testing/synctest bubble's clock starts: tests that check
// the service's time stamps, or move time, run in a bubble.
var t0 = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

const testTTL = 5 * time.Minute

// fixture is a Service on a SQLite store behind a real gRPC transport.
type fixture struct {
	client inventoryv1.InventoryServiceClient
	svc    *Service
	store  *SQLiteStore
}

// testItems is the small catalogue most tests start with.
func testItems() []Item {
	return []Item{
		{SKU: "keyboard-001", Name: "Keyboard", Price: Money{4999, "USD"}, Stock: Stock{Available: 10}, UpdateTime: t0},
		{SKU: "mouse-001", Name: "Mouse", Price: Money{2499, "USD"}, Stock: Stock{Available: 5}, UpdateTime: t0},
		{SKU: "gone-001", Name: "Sold out", Price: Money{100, "EUR"}, Stock: Stock{Available: 0}, UpdateTime: t0},
	}
}

// newFixture serves a Service on the database at path (sqlitedb.Memory
// when empty) seeded with items.
func newFixture(t *testing.T, path string, items []Item) *fixture {
	t.Helper()
	if path == "" {
		path = sqlitedb.Memory
	}
	store, err := OpenSQLite(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
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
	return &fixture{client: inventoryv1.NewInventoryServiceClient(serve(t, srv)), svc: svc, store: store}
}

// serve serves srv on a bufconn listener until the test ends and returns a
// client connection to it.
func serve(t *testing.T, srv *grpc.Server) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	conn := dial(t, lis)
	t.Cleanup(func() { srv.Stop(); <-done })
	return conn
}

func dial(t *testing.T, lis *bufconn.Listener) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// ctx returns a context bounded by 10s.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// as returns ctx carrying principal metadata with role.
func as(t *testing.T, role string) context.Context {
	return metadata.AppendToOutgoingContext(ctx(t), callmeta.SubjectKey, "tester", callmeta.RoleKey, role)
}

// checkErr fails unless err has code and ErrorInfo reason ("" for none).
func checkErr(t *testing.T, call string, err error, code codes.Code, reason string) {
	t.Helper()
	if status.Code(err) != code || rpcerr.Reason(err) != reason {
		t.Errorf("%s = %v, want code %v reason %q", call, err, code, reason)
	}
	if reason != "" {
		if d := rpcerr.ErrorInfo(err).GetDomain(); d != Domain {
			t.Errorf("%s ErrorInfo domain = %q, want %q", call, d, Domain)
		}
	}
}

// badFields returns the BadRequest field names of err, in order.
func badFields(err error) []string {
	var out []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				out = append(out, v.GetField())
			}
		}
	}
	return out
}

// echoes reports whether err's message or any ErrorInfo metadata value
// contains s.
func echoes(err error, s string) bool {
	if strings.Contains(status.Convert(err).Message(), s) {
		return true
	}
	for _, v := range rpcerr.ErrorInfo(err).GetMetadata() {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}

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
