package order

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/prefer"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// openStore opens the store db names, closed when t ends.
func openStore(t *testing.T, db string) backend {
	t.Helper()
	store, err := open(context.Background(), db, Lease{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// createPending stores a new PENDING order of customer under key.
func createPending(t *testing.T, store Store, customer, key string) *Record {
	t.Helper()
	r := testRecord(customer, key, 0)
	if prev, err := store.Create(context.Background(), r); err != nil || prev != nil {
		t.Fatalf("Create(%s, %s) = %v, %v", customer, key, prev, err)
	}
	return r
}

// fillAccepted stores n ACCEPTED orders of customer, keys prefixed by key.
func fillAccepted(t *testing.T, store Store, customer, key string, n int) {
	t.Helper()
	open := AcceptBounds{Total: 1 << 20, PerCustomer: 1 << 20}
	for i := range n {
		r := createPending(t, store, customer, fmt.Sprint(key, "-", i))
		if err := store.Accept(context.Background(), r.Order.GetId(), time.Now(), open); err != nil {
			t.Fatalf("Accept(%s) = %v", customer, err)
		}
	}
}

// cancelAccepted moves every ACCEPTED order to CANCELLED, so the next
// case starts with none waiting.
func cancelAccepted(t *testing.T, store Store) {
	t.Helper()
	ctx := context.Background()
	recs, err := store.Accepted(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		r.Order.Status = orderv1.Order_STATUS_CANCELLED
		if err := store.Update(ctx, r, orderv1.Order_STATUS_ACCEPTED); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAcceptBounds: Store.Accept checks both bounds against the orders
// already ACCEPTED (alice's and bob's) in the transaction of its write, on
// every backend; a new order of alice's is offered.
func TestAcceptBounds(t *testing.T) {
	tests := []struct {
		name       string
		alice, bob int // orders already ACCEPTED
		b          AcceptBounds
		want       error
	}{
		{"none waiting", 0, 0, AcceptBounds{Total: 1, PerCustomer: 1}, nil},
		{"both ok", 1, 2, AcceptBounds{Total: 5, PerCustomer: 2}, nil},
		{"total full", 1, 2, AcceptBounds{Total: 3, PerCustomer: 5}, ErrFull},
		{"customer full", 2, 1, AcceptBounds{Total: 10, PerCustomer: 2}, ErrCustomerFull},
		{"both full: total first", 2, 0, AcceptBounds{Total: 2, PerCustomer: 2}, ErrFull},
		{"other customer at its bound", 1, 2, AcceptBounds{Total: 10, PerCustomer: 2}, nil},
		{"zero total admits none", 0, 0, AcceptBounds{Total: 0, PerCustomer: 5}, ErrFull},
		{"zero per customer admits none", 0, 0, AcceptBounds{Total: 5, PerCustomer: 0}, ErrCustomerFull},
	}
	backends(t, func(t *testing.T, db string) {
		store := openStore(t, db)
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				defer cancelAccepted(t, store)
				fillAccepted(t, store, "alice", fmt.Sprint("a", i), tt.alice)
				fillAccepted(t, store, "bob", fmt.Sprint("b", i), tt.bob)
				r := createPending(t, store, "alice", fmt.Sprint("new", i))
				err := store.Accept(context.Background(), r.Order.GetId(), time.Now(), tt.b)
				if !errors.Is(err, tt.want) { // errors.Is(err, nil): err == nil
					t.Fatalf("Accept = %v, want %v", err, tt.want)
				}
				want := orderv1.Order_STATUS_ACCEPTED
				if tt.want != nil {
					want = orderv1.Order_STATUS_PENDING
				}
				if got, err := store.Get(context.Background(), r.Order.GetId()); err != nil || got.Order.GetStatus() != want {
					t.Errorf("after Accept the order is %v (%v), want %v", got.Order.GetStatus(), err, want)
				}
			})
		}
		open := AcceptBounds{Total: 10, PerCustomer: 10}
		r := createPending(t, store, "alice", "twice")
		if err := store.Accept(context.Background(), r.Order.GetId(), time.Now(), open); err != nil {
			t.Fatal(err)
		}
		if err := store.Accept(context.Background(), r.Order.GetId(), time.Now(), open); !errors.Is(err, ErrConflict) {
			t.Errorf("Accept(already ACCEPTED) = %v, want ErrConflict", err)
		}
		if err := store.Accept(context.Background(), "ord-none", time.Now(), open); !errors.Is(err, ErrConflict) {
			t.Errorf("Accept(no such order) = %v, want ErrConflict", err)
		}
	})
}

// asyncAs is subject's call with key and "prefer: respond-async".
func asyncAs(t *testing.T, subject, key string) context.Context {
	return metadata.AppendToOutgoingContext(as(t, subject, "customer", key), prefer.MetadataKey, "respond-async")
}

// TestAcceptedPerCustomer: 40 concurrent respond-async orders of one
// customer, inventory down, bound 5: exactly 5 are ACCEPTED; the rest are
// UNAVAILABLE INVENTORY_UNAVAILABLE naming the customer's limit, without
// preference-applied, and withdrawn; another customer is still accepted.
func TestAcceptedPerCustomer(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		h := newHarnessDB(t, db, WithMaxAcceptedPerCustomer(5))
		killInventory(h)
		const n, bound = 40, 5
		var wg sync.WaitGroup
		errs := make([]error, n)
		applied := make([]bool, n)
		for i := range n {
			wg.Go(func() {
				var hdr metadata.MD
				o, err := h.client.CreateOrder(asyncAs(t, "alice", fmt.Sprint("k", i)), orderReq("pm_card_ok", "keyboard-001", 1), grpc.Header(&hdr))
				if err == nil && o.GetStatus() != orderv1.Order_STATUS_ACCEPTED {
					err = fmt.Errorf("order %v", o.GetStatus())
				}
				errs[i], applied[i] = err, len(hdr.Get(prefer.AppliedKey)) > 0
			})
		}
		wg.Wait()
		accepted := 0
		for i, err := range errs {
			if err == nil {
				accepted++
				continue
			}
			md := rpcerr.ErrorInfo(err).GetMetadata()
			if status.Code(err) != codes.Unavailable || rpcerr.ErrorInfo(err).GetReason() != reasonInventoryUnavailable ||
				md[MetaLimit] != LimitCustomer || applied[i] {
				t.Errorf("order %d: %v (metadata %v, applied %v); want UNAVAILABLE %s, limit customer, not applied",
					i, err, md, applied[i], reasonInventoryUnavailable)
			}
		}
		if stored := len(h.stored()); accepted != bound || stored != bound {
			t.Fatalf("%d of %d concurrent orders accepted, %d stored; want %d and %d", accepted, n, stored, bound, bound)
		}
		var hdr metadata.MD
		o, err := h.client.CreateOrder(asyncAs(t, "bob", "b1"), orderReq("pm_card_ok", "keyboard-001", 1), grpc.Header(&hdr))
		if err != nil || o.GetStatus() != orderv1.Order_STATUS_ACCEPTED || len(hdr.Get(prefer.AppliedKey)) != 1 {
			t.Fatalf("bob's CreateOrder = %v, %v; want ACCEPTED, applied", o.GetStatus(), err)
		}
	})
}
