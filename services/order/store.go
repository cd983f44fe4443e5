package order

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/proto"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/resourcetag"
)

// Store errors. Implementations return them (possibly wrapped) so the
// service can branch with errors.Is.
var (
	// ErrNotFound: no order has the id.
	ErrNotFound = errors.New("order: not found")
	// ErrConflict: the order is no longer in the status the write expected.
	ErrConflict = errors.New("order: status changed concurrently")
	// ErrFull: as many orders are ACCEPTED as AcceptBounds.Total allows
	// (Accept).
	ErrFull = errors.New("order: too many accepted orders waiting")
	// ErrCustomerFull: the order's customer has as many orders ACCEPTED as
	// AcceptBounds.PerCustomer allows (Accept).
	ErrCustomerFull = errors.New("order: too many accepted orders of the customer waiting")
)

// Store persists orders and their idempotency records. The service owns
// this interface; SQLiteStore implements it, and a PostgreSQL backend only
// has to implement the same eight methods. Implementations must be safe for
// concurrent use.
type Store interface {
	// Create inserts r, a new PENDING order, together with its idempotency
	// record (r.Order.Customer, r.IdempotencyKey, r.RequestHash), in one
	// transaction. When the customer already used the key it inserts nothing
	// and returns the record stored under it.
	Create(ctx context.Context, r *Record) (existing *Record, err error)
	// Get returns the order with id, or ErrNotFound.
	Get(ctx context.Context, id string) (*Record, error)
	// Update overwrites the mutable fields of r (status, lines, total,
	// reservation and payment ids, failure, update time) if the stored order
	// still has status from; otherwise it returns ErrConflict.
	Update(ctx context.Context, r *Record, from orderv1.Order_Status) error
	// Delete removes a PENDING order and its idempotency record in one
	// transaction, so the customer's key is free again. ErrConflict when the
	// order is gone or no longer PENDING.
	Delete(ctx context.Context, id string) error
	// List returns up to q.Limit orders, newest first (create time, then id,
	// both descending).
	List(ctx context.Context, q ListQuery) ([]*Record, error)
	// Pending returns up to limit PENDING orders created at or before
	// createdBefore, oldest first.
	Pending(ctx context.Context, createdBefore time.Time, limit int) ([]*Record, error)
	// Accept moves PENDING order id to ACCEPTED, with update time now, if
	// b admits it (AcceptBounds.Check, given the orders ACCEPTED in all and
	// those of the order's customer): the counts and the write are one
	// transaction, so concurrent calls never pass either bound. ErrFull or
	// ErrCustomerFull when b refuses; ErrConflict when the order is gone or
	// not PENDING.
	Accept(ctx context.Context, id string, now time.Time, b AcceptBounds) error
	// Accepted returns up to limit ACCEPTED orders, oldest first (create
	// time, then id): the order they arrived in.
	Accepted(ctx context.Context, limit int) ([]*Record, error)
}

// AcceptBounds are the bounds Store.Accept holds the orders waiting
// ACCEPTED to.
type AcceptBounds struct {
	// Total is the most orders ACCEPTED at once, all customers together.
	// 0 or negative admits none.
	Total int
	// PerCustomer is the most orders of one customer ACCEPTED at once, so
	// one customer cannot take all of Total. 0 or negative admits none.
	PerCustomer int
}

// Check says whether one more order may be ACCEPTED when total orders are
// ACCEPTED, mine of them its customer's: nil, ErrFull when Total is
// reached (checked first: it is nobody's own doing) or ErrCustomerFull when
// PerCustomer is.
func (b AcceptBounds) Check(total, mine int) error {
	switch {
	case total >= b.Total:
		return ErrFull
	case mine >= b.PerCustomer:
		return ErrCustomerFull
	}
	return nil
}

// Record is one stored order: what the API shows plus what only the service
// needs.
type Record struct {
	// Order is the API view. Customer and Id are immutable.
	Order *orderv1.Order
	// IdempotencyKey is the customer's key for the CreateOrder call.
	IdempotencyKey string
	// RequestHash is the SHA-256 of the CreateOrder request (see hashRequest).
	RequestHash []byte
	// FailureInfo is ErrorInfo metadata for a FAILED order (e.g. the SKU that
	// ran out), so a replay returns the same error as the first answer.
	FailureInfo map[string]string
}

// order returns the stored order, as ListOrders sends it.
// order is the order as the service answers it, with its etag
// (resourcetag) computed from the stored record; every answer builds it
// here. It sets the etag on r.Order itself.
func (r *Record) order() *orderv1.Order { return resourcetag.Set(r.Order) }

func (r *Record) clone() *Record {
	c := *r
	c.Order = proto.Clone(r.Order).(*orderv1.Order)
	if r.FailureInfo != nil {
		c.FailureInfo = make(map[string]string, len(r.FailureInfo))
		for k, v := range r.FailureInfo {
			c.FailureInfo[k] = v
		}
	}
	return &c
}

// ListQuery selects one page of orders.
type ListQuery struct {
	// Customer limits the page to one customer; "" means every customer.
	Customer string
	// After, when set, starts the page after this position.
	After *Cursor
	// Limit is the most records to return; it must be positive.
	Limit int
}

// Cursor is a position in the newest-first order.
type Cursor struct {
	CreateTime time.Time
	ID         string
}
