package order

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/pgtest"
)

// testRecord is a new PENDING order of customer under key, created at sec
// seconds past a fixed instant.
func testRecord(customer, key string, sec int64) *Record {
	at := timestamppb.New(time.Unix(1_700_000_000+sec, 0))
	return &Record{
		Order: &orderv1.Order{
			Id: newOrderID(), Customer: customer, Status: orderv1.Order_STATUS_PENDING, PaymentMethod: "pm_card_ok",
			Lines:      []*orderv1.OrderLine{{Sku: "keyboard-001", Quantity: 2}},
			CreateTime: at, UpdateTime: at,
		},
		IdempotencyKey: key,
		RequestHash:    make([]byte, 32),
	}
}

// TestStore is the Store contract, run on every backend: what Create, Get,
// Update, Delete, List and Pending promise the service.
func TestStore(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		ctx := context.Background()
		store, err := open(ctx, db, Lease{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		a := testRecord("alice", "k1", 1)
		if prev, err := store.Create(ctx, a); err != nil || prev != nil {
			t.Fatalf("Create(new) = %v, %v; want nil, nil", prev, err)
		}
		dup := testRecord("alice", "k1", 2)
		prev, err := store.Create(ctx, dup)
		if err != nil || prev == nil || prev.Order.GetId() != a.Order.GetId() {
			t.Fatalf("Create(same customer and key) = %v, %v; want the first order", prev, err)
		}
		if prev, err := store.Create(ctx, testRecord("bob", "k1", 3)); err != nil || prev != nil {
			t.Errorf("Create(other customer, same key) = %v, %v; want a new order", prev, err)
		}
		got, err := store.Get(ctx, a.Order.GetId())
		if err != nil || !cmp.Equal(a, got, protocmp.Transform()) {
			t.Errorf("Get = %v (-want +got):\n%s", err, cmp.Diff(a, got, protocmp.Transform()))
		}
		if _, err := store.Get(ctx, "ord-none"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(unknown) = %v, want ErrNotFound", err)
		}

		next := a.clone()
		next.Order.Status = orderv1.Order_STATUS_FAILED
		next.Order.Total = &typev1.Money{AmountMinor: 9998, Currency: "USD"}
		next.Order.FailureReason = "PAYMENT_DECLINED"
		next.FailureInfo = map[string]string{"step": "charge"}
		if err := store.Update(ctx, next, orderv1.Order_STATUS_PENDING); err != nil {
			t.Fatalf("Update(from PENDING) = %v", err)
		}
		if err := store.Update(ctx, next, orderv1.Order_STATUS_PENDING); !errors.Is(err, ErrConflict) {
			t.Errorf("Update(from PENDING) again = %v, want ErrConflict", err)
		}
		if got, _ := store.Get(ctx, a.Order.GetId()); !cmp.Equal(next, got, protocmp.Transform()) {
			t.Errorf("after Update (-want +got):\n%s", cmp.Diff(next, got, protocmp.Transform()))
		}
		if err := store.Delete(ctx, a.Order.GetId()); !errors.Is(err, ErrConflict) {
			t.Errorf("Delete(FAILED) = %v, want ErrConflict", err)
		}
		c := testRecord("carol", "k1", 4)
		store.Create(ctx, c)
		if err := store.Delete(ctx, c.Order.GetId()); err != nil {
			t.Errorf("Delete(PENDING) = %v", err)
		}
		if prev, err := store.Create(ctx, testRecord("carol", "k1", 5)); err != nil || prev != nil {
			t.Errorf("Create after Delete = %v, %v; want the key free again", prev, err)
		}

		pending, err := store.Pending(ctx, time.Unix(1_700_000_004, 0), 10)
		if err != nil || len(pending) != 1 || pending[0].Order.GetCustomer() != "bob" {
			t.Errorf("Pending(created by +4s) = %d orders, %v; want bob's only", len(pending), err)
		}
		page, err := store.List(ctx, ListQuery{Limit: 2})
		if err != nil || len(page) != 2 || page[0].Order.GetCustomer() != "carol" || page[1].Order.GetCustomer() != "bob" {
			t.Fatalf("List(2) = %v, %v; want carol's and bob's, newest first", page, err)
		}
		last := page[1].Order
		rest, err := store.List(ctx, ListQuery{After: &Cursor{CreateTime: last.GetCreateTime().AsTime(), ID: last.GetId()}, Limit: 10})
		if err != nil || len(rest) != 1 || rest[0].Order.GetId() != a.Order.GetId() {
			t.Errorf("List(after bob's) = %v, %v; want alice's", rest, err)
		}
		if mine, err := store.List(ctx, ListQuery{Customer: "alice", Limit: 10}); err != nil || len(mine) != 1 {
			t.Errorf("List(alice) = %d, %v; want 1", len(mine), err)
		}
	})
}

// TestLease: a PENDING order is leased to one order process at a time; a
// lapsed lease passes to another; a settled order is leased to none.
func TestLease(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	openAs := func(owner string, ttl time.Duration) *PostgresStore {
		s, err := OpenPostgres(ctx, db, Lease{Owner: owner, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := openAs("a", time.Hour), openAs("b", time.Hour)
	dead := openAs("dead", time.Microsecond) // its leases lapse at once, as a dead replica's do
	held, orphan := testRecord("alice", "k1", 1), testRecord("alice", "k2", 2)
	mustCreate := func(s *PostgresStore, r *Record) {
		if _, err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(a, held)
	mustCreate(dead, orphan)
	pendingIDs := func(s *PostgresStore) []string {
		recs, err := s.Pending(ctx, time.Unix(1_800_000_000, 0), 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range recs {
			ids = append(ids, r.Order.GetId())
		}
		return ids
	}
	if diff := cmp.Diff([]string{orphan.Order.GetId()}, pendingIDs(b)); diff != "" {
		t.Errorf("b's Pending (-want +got): a's live lease must hide its order\n%s", diff)
	}
	if diff := cmp.Diff([]string{held.Order.GetId(), orphan.Order.GetId()}, pendingIDs(a)); diff != "" {
		t.Errorf("a's Pending (-want +got):\n%s", diff)
	}
	steps := []struct {
		name  string
		store *PostgresStore
		rec   *Record
		want  bool
	}{
		{"b takes a's live lease", b, held, false},
		{"a renews its own", a, held, true},
		{"b takes the lapsed lease", b, orphan, true},
		{"a takes b's live lease", a, orphan, false},
	}
	for _, st := range steps {
		if got, err := st.store.Lease(ctx, st.rec.Order.GetId()); err != nil || got != st.want {
			t.Errorf("%s: Lease = %v, %v; want %v", st.name, got, err, st.want)
		}
	}
	done := held.clone()
	done.Order.Status = orderv1.Order_STATUS_CONFIRMED
	if err := a.Update(ctx, done, orderv1.Order_STATUS_PENDING); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Lease(ctx, held.Order.GetId()); err != nil || got {
		t.Errorf("Lease(settled) = %v, %v; want false", got, err)
	}
}

// TestCreateRacesOnOneKey: concurrent Creates of one customer's key on
// several stores sharing a database store one order, and each is told the
// same one.
func TestCreateRacesOnOneKey(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	const stores, calls = 3, 30
	var ss []*PostgresStore
	for i := range stores {
		s, err := OpenPostgres(ctx, db, Lease{Owner: fmt.Sprint("r", i)})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ss = append(ss, s)
	}
	ids := make(chan string, calls)
	errs := make(chan error, calls)
	for i := range calls {
		go func() {
			r := testRecord("alice", "one-key", int64(i))
			prev, err := ss[i%stores].Create(ctx, r)
			switch {
			case err != nil:
				errs <- err
			case prev != nil:
				ids <- prev.Order.GetId()
			default:
				ids <- r.Order.GetId()
			}
		}()
	}
	seen := map[string]int{}
	for range calls {
		select {
		case id := <-ids:
			seen[id]++
		case err := <-errs:
			t.Errorf("Create: %v", err)
		}
	}
	if len(seen) != 1 {
		t.Errorf("Creates answered %d distinct orders (%v), want 1", len(seen), seen)
	}
}
