package inventory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteTx is the Tx of SQLiteStore.InTx. Rows need no explicit locking:
// the transaction holds SQLite's write lock from its first statement.
type sqliteTx struct {
	tx *sql.Tx
}

var _ Tx = (*sqliteTx)(nil)

func (t *sqliteTx) Item(ctx context.Context, sku string) (Item, error) {
	return getItem(ctx, t.tx, sku)
}

func (t *sqliteTx) InsertItem(ctx context.Context, it Item) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO items (`+itemColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		it.SKU, it.Name, it.Price.Minor, it.Price.Currency,
		it.Stock.Available, it.Stock.Reserved, it.Stock.Sold, nanos(it.UpdateTime))
	if isUniqueViolation(err) {
		return ErrExists
	}
	return err
}

func (t *sqliteTx) UpdateItem(ctx context.Context, it Item) error {
	res, err := t.tx.ExecContext(ctx,
		`UPDATE items SET name = ?, price_minor = ?, currency = ?, available = ?, update_time = ? WHERE sku = ?`,
		it.Name, it.Price.Minor, it.Price.Currency, it.Stock.Available, nanos(it.UpdateTime), it.SKU)
	return oneRow(res, err)
}

func (t *sqliteTx) MoveStock(ctx context.Context, sku string, d Stock, now time.Time) error {
	res, err := t.tx.ExecContext(ctx,
		`UPDATE items SET available = available + ?, reserved = reserved + ?, sold = sold + ?, update_time = ?
		 WHERE sku = ?`, d.Available, d.Reserved, d.Sold, nanos(now), sku)
	if err != nil {
		return fmt.Errorf("move stock of %s by %+v: %w", sku, d, err)
	}
	return oneRow(res, nil)
}

func (t *sqliteTx) Reservation(ctx context.Context, id string) (Reservation, error) {
	return getReservation(ctx, t.tx, id)
}

func (t *sqliteTx) ReservationByOrder(ctx context.Context, orderID string) (Reservation, error) {
	var id string
	err := t.tx.QueryRowContext(ctx, `SELECT id FROM reservations WHERE order_id = ?`, orderID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return Reservation{}, ErrNotFound
	}
	if err != nil {
		return Reservation{}, err
	}
	return getReservation(ctx, t.tx, id)
}

func (t *sqliteTx) InsertReservation(ctx context.Context, r Reservation) error {
	_, err := t.tx.ExecContext(ctx,
		`INSERT INTO reservations (id, order_id, state, expire_time, create_time, update_time)
		 VALUES (?, ?, ?, ?, ?, ?)`,
		r.ID, r.OrderID, r.State, nanos(r.ExpireTime), nanos(r.CreateTime), nanos(r.UpdateTime))
	if err != nil {
		return err
	}
	for i, l := range r.Lines {
		_, err := t.tx.ExecContext(ctx,
			`INSERT INTO reservation_lines (reservation_id, position, sku, quantity, price_minor, currency)
			 VALUES (?, ?, ?, ?, ?, ?)`, r.ID, i, l.SKU, l.Quantity, l.Price.Minor, l.Price.Currency)
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *sqliteTx) SetState(ctx context.Context, id string, s State, now time.Time) error {
	res, err := t.tx.ExecContext(ctx,
		`UPDATE reservations SET state = ?, update_time = ? WHERE id = ?`, s, nanos(now), id)
	return oneRow(res, err)
}

func (t *sqliteTx) Due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := t.tx.QueryContext(ctx,
		`SELECT id FROM reservations WHERE state = 'ACTIVE' AND expire_time <= ?
		 ORDER BY expire_time LIMIT ?`, nanos(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// oneRow turns an UPDATE that matched no row into ErrNotFound.
func oneRow(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errors.Join(ErrNotFound, err)
	}
	return nil
}

func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}
