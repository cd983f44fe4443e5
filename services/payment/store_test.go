package payment

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/testing/protocmp"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/grpctest"
)

// TestReopen: what one store wrote, a store on the same file reads back,
// idempotency keys included.
func TestReopen(t *testing.T) { backends(t, testReopen) }

func testReopen(t *testing.T, path string) {
	f := newFixture(t, path)
	p := f.create(t, "key-1", charge("order-1", 100, MethodCardOK))
	if err := f.store.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	g := newFixture(t, path)
	got, err := g.client.GetPayment(ctx(t), &paymentv1.GetPaymentRequest{Id: p.GetId()})
	if d := cmp.Diff(p, got, protocmp.Transform()); err != nil || d != "" {
		t.Errorf("GetPayment after reopen = %v (-before +after):\n%s", err, d)
	}
	if again := g.create(t, "key-1", charge("order-1", 100, MethodCardOK)); again.GetId() != p.GetId() {
		t.Errorf("repeat after reopen = %s, want %s", again.GetId(), p.GetId())
	}
}

// TestOneCaptureIndex: the schema refuses a second capture even when the
// service's check is bypassed.
func TestOneCaptureIndex(t *testing.T) { backends(t, testOneCaptureIndex) }

func testOneCaptureIndex(t *testing.T, db string) {
	store, err := open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	insert := func(id, key string, s Status) error {
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		p := Payment{ID: id, OrderID: "order-1", Amount: Money{1, "USD"}, Method: MethodCardOK, Status: s, CreateTime: at, UpdateTime: at}
		return store.InTx(ctx(t), func(tx Tx) error {
			return tx.InsertPayment(ctx(t), p, Key{Key: key, RequestHash: make([]byte, 32), PaymentID: id})
		})
	}
	tests := []struct {
		name, id, key string
		status        Status
		want          error
	}{
		{"first capture", "pay-1", "k1", StatusCaptured, nil},
		{"second capture", "pay-2", "k2", StatusCaptured, ErrOrderPaid},
		{"decline", "pay-3", "k3", StatusDeclined, nil},
		{"key taken", "pay-4", "k1", StatusDeclined, ErrKeyExists},
	}
	for _, tt := range tests {
		if err := insert(tt.id, tt.key, tt.status); !errors.Is(err, tt.want) {
			t.Errorf("%s: InsertPayment = %v, want %v", tt.name, err, tt.want)
		}
	}
	if ps, err := store.Payments(ctx(t), "order-1", "", 10); err != nil || len(ps) != 2 {
		t.Errorf("Payments = %d, %v; want 2 (refused inserts leave nothing)", len(ps), err)
	}
}

// staleStore hides stored keys from the first transaction, as a backend
// that does not serialize writers would when two calls race.
type staleStore struct {
	backend
	hidden atomic.Int32
}

func (s *staleStore) InTx(ctx context.Context, fn func(Tx) error) error {
	return s.backend.InTx(ctx, func(tx Tx) error {
		if s.hidden.Add(1) == 1 {
			return fn(staleTx{tx})
		}
		return fn(tx)
	})
}

type staleTx struct{ Tx }

func (staleTx) Key(context.Context, string) (Key, error) { return Key{}, ErrNotFound }

// TestLostKeyRaceReadsWinner: a call that loses the key's unique constraint
// returns the winner's payment.
func TestLostKeyRaceReadsWinner(t *testing.T) { backends(t, testLostKeyRaceReadsWinner) }

func testLostKeyRaceReadsWinner(t *testing.T, db string) {
	f := newFixture(t, db)
	first := f.create(t, "key-1", charge("order-1", 100, MethodCardDeclined))
	svc, err := New(&staleStore{backend: f.store})
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	paymentv1.RegisterPaymentServiceServer(srv, svc)
	client := paymentv1.NewPaymentServiceClient(grpctest.Serve(t, srv))
	got, err := client.CreatePayment(keyed(t, "key-1"), charge("order-1", 100, MethodCardDeclined))
	if err != nil || got.GetId() != first.GetId() {
		t.Errorf("CreatePayment after a lost race = %v, %v; want %s", got.GetId(), err, first.GetId())
	}
	if ps := f.list(t, "order-1"); len(ps) != 1 {
		t.Errorf("order-1 has %d payments, want 1", len(ps))
	}
}

// TestPaymentsKeyset: Payments pages an order's payments in insertion order
// when they share a create time, on every backend (SQLite's rowid,
// PostgreSQL's seq).
func TestPaymentsKeyset(t *testing.T) { backends(t, testPaymentsKeyset) }

func testPaymentsKeyset(t *testing.T, db string) {
	store, err := open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var want []string
	for i := range 5 {
		id := fmt.Sprintf("pay-%d", 5-i) // ids against insertion order
		p := Payment{ID: id, OrderID: "o1", Amount: Money{1, "USD"}, Method: MethodCardDeclined, Status: StatusDeclined, CreateTime: at, UpdateTime: at}
		if err := store.InTx(ctx(t), func(tx Tx) error {
			return tx.InsertPayment(ctx(t), p, Key{Key: id, RequestHash: make([]byte, 32), PaymentID: id})
		}); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	var got []string
	after := ""
	for range 5 {
		page, err := store.Payments(ctx(t), "o1", after, 2)
		if err != nil {
			t.Fatalf("Payments(after %q): %v", after, err)
		}
		if len(page) == 0 {
			break
		}
		for _, p := range page {
			got = append(got, p.ID)
		}
		after = page[len(page)-1].ID
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("payments across pages (-want +got):\n%s", diff)
	}
}
