package payment

import (
	"context"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/grpctest"
	"github.com/portico-gateway/portico/internal/pgtest"
	"github.com/portico-gateway/portico/internal/sqlitedb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a Service on a SQLite store behind a real gRPC transport.
type fixture struct {
	client paymentv1.PaymentServiceClient
	store  backend
}

// backends runs test once per store backend, as a subtest named for it,
// with the --db value of a fresh database: an SQLite file, and a PostgreSQL
// database of its own (skipped, saying so, when DATABASE_URL is unset).
func backends(t *testing.T, test func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) { test(t, filepath.Join(t.TempDir(), "payment.db")) })
	t.Run("postgres", func(t *testing.T) { test(t, pgtest.New(t)) })
}

// newFixture serves a Service on the database at path (sqlitedb.Memory when
// empty). Tests in which time must pass build it inside a testing/synctest
// bubble and move time with time.Sleep.
func newFixture(t *testing.T, path string) *fixture {
	t.Helper()
	if path == "" {
		path = sqlitedb.Memory
	}
	store, err := open(t.Context(), path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	svc, err := New(store)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := grpc.NewServer()
	paymentv1.RegisterPaymentServiceServer(srv, svc)
	return &fixture{client: paymentv1.NewPaymentServiceClient(grpctest.Serve(t, srv)), store: store}
}

// ctx returns a context for one call, bounded by grpctest.Timeout.
func ctx(t *testing.T) context.Context { return grpctest.Context(t) }

// keyed returns ctx carrying an idempotency key.
func keyed(t *testing.T, key string) context.Context { return withKey(ctx(t), key) }

func usd(minor int64) *typev1.Money { return &typev1.Money{AmountMinor: minor, Currency: "USD"} }

func charge(order string, minor int64, method string) *paymentv1.CreatePaymentRequest {
	return &paymentv1.CreatePaymentRequest{OrderId: order, Amount: usd(minor), PaymentMethod: method}
}

// create calls CreatePayment with key or fails the test.
func (f *fixture) create(t *testing.T, key string, req *paymentv1.CreatePaymentRequest) *paymentv1.Payment {
	t.Helper()
	p, err := f.client.CreatePayment(keyed(t, key), req)
	if err != nil {
		t.Fatalf("CreatePayment(%s): %v", key, err)
	}
	return p
}

// list returns the payments of order or fails the test.
func (f *fixture) list(t *testing.T, order string) []*paymentv1.Payment {
	t.Helper()
	resp, err := f.client.ListPayments(ctx(t), &paymentv1.ListPaymentsRequest{OrderId: order})
	if err != nil {
		t.Fatalf("ListPayments(%s): %v", order, err)
	}
	return resp.GetPayments()
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

// withKey returns c carrying an idempotency key.
func withKey(c context.Context, key string) context.Context {
	return callmeta.WithIdempotencyKey(c, key)
}
