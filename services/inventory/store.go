package inventory

import (
	"context"
	"errors"
	"time"
)

// Store errors. A backend returns them, possibly wrapped, so the service can
// tell a missing or duplicate row from a failure.
var (
	// ErrNotFound means the item or reservation does not exist.
	ErrNotFound = errors.New("inventory: not found")
	// ErrExists means an item with the SKU already exists.
	ErrExists = errors.New("inventory: already exists")
)

// Store persists items and reservations. The service owns the business rules;
// a Store only reads and writes rows, so another backend (PostgreSQL) needs no
// change to the service.
type Store interface {
	// Item returns one item, or ErrNotFound.
	Item(ctx context.Context, sku string) (Item, error)
	// Items returns up to limit items with SKU greater than after, in SKU
	// order.
	Items(ctx context.Context, after string, limit int) ([]Item, error)
	// Reservation returns one reservation with its lines, or ErrNotFound.
	Reservation(ctx context.Context, id string) (Reservation, error)
	// InTx runs fn in one write transaction, serialized with every other
	// InTx. It commits when fn returns nil and rolls back otherwise,
	// returning fn's error unchanged.
	InTx(ctx context.Context, fn func(Tx) error) error
}

// Tx is the write side of a Store inside InTx. Reads see the transaction's
// own writes.
type Tx interface {
	// Item returns one item, or ErrNotFound.
	Item(ctx context.Context, sku string) (Item, error)
	// InsertItem adds an item, or returns ErrExists.
	InsertItem(ctx context.Context, it Item) error
	// UpdateItem overwrites the name, price, available and update time of
	// an existing item (reserved and sold are left alone).
	UpdateItem(ctx context.Context, it Item) error
	// MoveStock adds d to an item's buckets and sets its update time. It
	// fails, changing nothing, if a bucket would go negative.
	MoveStock(ctx context.Context, sku string, d Stock, now time.Time) error
	// Reservation returns one reservation, or ErrNotFound.
	Reservation(ctx context.Context, id string) (Reservation, error)
	// ReservationByOrder returns the reservation of an order, or ErrNotFound.
	ReservationByOrder(ctx context.Context, orderID string) (Reservation, error)
	// InsertReservation adds a reservation and its lines.
	InsertReservation(ctx context.Context, r Reservation) error
	// SetState changes a reservation's state and update time.
	SetState(ctx context.Context, id string, s State, now time.Time) error
	// Due returns the ids of up to limit ACTIVE reservations whose expire
	// time is at or before now.
	Due(ctx context.Context, now time.Time, limit int) ([]string, error)
}

// Money is an amount in a currency's minor unit (cents for USD).
type Money struct {
	Minor    int64
	Currency string
}

// Stock is an item's three buckets, or a change to them.
type Stock struct {
	Available, Reserved, Sold int64
}

// Item is one catalogue entry and its stock.
type Item struct {
	SKU        string
	Name       string
	Price      Money
	Stock      Stock
	UpdateTime time.Time
}

// State is a reservation's lifecycle state.
type State string

// Reservation states; COMMITTED and RELEASED are final.
const (
	StateActive    State = "ACTIVE"
	StateCommitted State = "COMMITTED"
	StateReleased  State = "RELEASED"
)

// Line is a quantity of one SKU and its unit price when reserved.
type Line struct {
	SKU      string
	Quantity int32
	Price    Money
}

// Reservation is stock held for one order.
type Reservation struct {
	ID         string
	OrderID    string
	Lines      []Line
	State      State
	ExpireTime time.Time
	CreateTime time.Time
	UpdateTime time.Time
}
