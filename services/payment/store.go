package payment

import (
	"context"
	"errors"
	"time"
)

// Store errors. A backend returns them, possibly wrapped, so the service can
// tell a missing row or a lost race from a failure.
var (
	// ErrNotFound means the payment or idempotency key does not exist.
	ErrNotFound = errors.New("payment: not found")
	// ErrKeyExists means another transaction stored the idempotency key
	// first.
	ErrKeyExists = errors.New("payment: idempotency key exists")
	// ErrOrderPaid means the order already has a CAPTURED payment.
	ErrOrderPaid = errors.New("payment: order already has a captured payment")
)

// Store persists payments and idempotency keys. The service owns the
// business rules; a Store only reads and writes rows, so another backend
// (PostgreSQL) needs no change to the service.
type Store interface {
	// Payment returns one payment, or ErrNotFound.
	Payment(ctx context.Context, id string) (Payment, error)
	// Payments returns at most limit payments of an order, oldest first,
	// starting after the payment with id after ("" starts at the oldest).
	Payments(ctx context.Context, orderID, after string, limit int) ([]Payment, error)
	// InTx runs fn in one write transaction. It commits when fn returns
	// nil and rolls back otherwise, returning fn's error unchanged.
	InTx(ctx context.Context, fn func(Tx) error) error
}

// Tx is the write side of a Store inside InTx.
type Tx interface {
	// Key returns a stored idempotency key, or ErrNotFound.
	Key(ctx context.Context, key string) (Key, error)
	// Payment returns one payment, or ErrNotFound.
	Payment(ctx context.Context, id string) (Payment, error)
	// Captured reports whether the order has a CAPTURED payment.
	Captured(ctx context.Context, orderID string) (bool, error)
	// InsertPayment stores p and its idempotency key. It returns
	// ErrOrderPaid if p is CAPTURED and the order already has a captured
	// payment, and ErrKeyExists if key is taken.
	InsertPayment(ctx context.Context, p Payment, key Key) error
	// SetStatus changes a payment's status and update time.
	SetStatus(ctx context.Context, id string, s Status, now time.Time) error
}

// Money is an amount in a currency's minor unit (cents for USD).
type Money struct {
	Minor    int64
	Currency string
}

// Status is a payment's status.
type Status string

// Payment statuses.
const (
	StatusCaptured Status = "CAPTURED"
	StatusDeclined Status = "DECLINED"
	StatusRefunded Status = "REFUNDED"
)

// Payment is one charge attempt against an order.
type Payment struct {
	ID            string
	OrderID       string
	Amount        Money
	Method        string
	Status        Status
	FailureReason string
	CreateTime    time.Time
	UpdateTime    time.Time
}

// Key is a stored idempotency key: the key, the hash of the request that
// first used it, and the payment that request created.
type Key struct {
	Key         string
	RequestHash []byte
	PaymentID   string
}
