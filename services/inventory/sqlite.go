package inventory

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/portico-gateway/portico/internal/sqlitedb"
	"github.com/portico-gateway/portico/internal/telemetry"
)

//go:embed migrations/*.sql
var migrations embed.FS

// SQLiteStore is the Store on an SQLite database. It is safe for concurrent
// use; write transactions are serialized by SQLite (BEGIN IMMEDIATE).
type SQLiteStore struct {
	*sqlitedb.DB // Close, and Ping: the readiness probe
}

var _ Store = (*SQLiteStore)(nil)

// OpenSQLite opens the database at path (sqlitedb.Memory for a private
// in-memory one), creating it and its directory and applying migrations as
// needed.
func OpenSQLite(ctx context.Context, path string) (*SQLiteStore, error) {
	db, err := sqlitedb.Open(ctx, path, migrations)
	if err != nil {
		return nil, err
	}
	return &SQLiteStore{db}, nil
}

// Seed inserts items in one transaction if the catalogue is empty, and
// reports whether it did. A catalogue with any item is left alone.
func (s *SQLiteStore) Seed(ctx context.Context, items []Item) (bool, error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var found bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM items)`).Scan(&found); err != nil || found {
		return false, err
	}
	st := &sqliteTx{tx: tx}
	for _, it := range items {
		if err := st.InsertItem(ctx, it); err != nil {
			return false, fmt.Errorf("seed %s: %w", it.SKU, err)
		}
	}
	return true, tx.Commit()
}

// Item implements Store.
func (s *SQLiteStore) Item(ctx context.Context, sku string) (Item, error) {
	return getItem(ctx, s.Reader(), sku)
}

// Items implements Store.
func (s *SQLiteStore) Items(ctx context.Context, after string, limit int) ([]Item, error) {
	rows, err := s.Reader().QueryContext(ctx,
		`SELECT `+itemColumns+` FROM items WHERE sku > ? ORDER BY sku LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Item
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// Reservation implements Store.
func (s *SQLiteStore) Reservation(ctx context.Context, id string) (Reservation, error) {
	return getReservation(ctx, s.Reader(), id)
}

// InTx implements Store.
// Its span ("sqlite tx") has status Error only when the database fails; a
// rule fn refuses shows as a "rollback" event.
func (s *SQLiteStore) InTx(ctx context.Context, fn func(Tx) error) (err error) {
	ctx, span := telemetry.StartDB(ctx, telemetry.SQLite, "tx")
	var dbErr error
	defer func() { telemetry.End(span, dbErr) }()
	tx, dbErr := s.DB.BeginTx(ctx, nil) // BEGIN IMMEDIATE: see sqlitedb
	if dbErr != nil {
		return dbErr
	}
	defer tx.Rollback() // no-op after Commit; covers a panicking fn
	if err := fn(&sqliteTx{tx: tx}); err != nil {
		span.AddEvent("rollback")
		return err
	}
	dbErr = tx.Commit()
	return dbErr
}

// querier is what *sql.DB and *sql.Tx share, so reads work in and out of a
// transaction.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const itemColumns = `sku, name, price_minor, currency, available, reserved, sold, update_time`

func getItem(ctx context.Context, q querier, sku string) (Item, error) {
	it, err := scanItem(q.QueryRowContext(ctx, `SELECT `+itemColumns+` FROM items WHERE sku = ?`, sku))
	if errors.Is(err, sql.ErrNoRows) {
		return Item{}, ErrNotFound
	}
	return it, err
}

func scanItem(row interface{ Scan(...any) error }) (Item, error) {
	var it Item
	var ns int64
	err := row.Scan(&it.SKU, &it.Name, &it.Price.Minor, &it.Price.Currency,
		&it.Stock.Available, &it.Stock.Reserved, &it.Stock.Sold, &ns)
	it.UpdateTime = fromNanos(ns)
	return it, err
}

func getReservation(ctx context.Context, q querier, id string) (Reservation, error) {
	r := Reservation{ID: id}
	var exp, created, updated int64
	err := q.QueryRowContext(ctx,
		`SELECT order_id, state, expire_time, create_time, update_time FROM reservations WHERE id = ?`, id,
	).Scan(&r.OrderID, &r.State, &exp, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Reservation{}, ErrNotFound
	}
	if err != nil {
		return Reservation{}, err
	}
	r.ExpireTime, r.CreateTime, r.UpdateTime = fromNanos(exp), fromNanos(created), fromNanos(updated)
	r.Lines, err = getLines(ctx, q, id)
	return r, err
}

func getLines(ctx context.Context, q querier, id string) ([]Line, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT sku, quantity, price_minor, currency FROM reservation_lines
		 WHERE reservation_id = ? ORDER BY position`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Line
	for rows.Next() {
		var l Line
		if err := rows.Scan(&l.SKU, &l.Quantity, &l.Price.Minor, &l.Price.Currency); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// Times are stored as Unix nanoseconds and read back in UTC.
func nanos(t time.Time) int64     { return t.UnixNano() }
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
