package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

var (
	statusPending  = orderv1.Order_STATUS_PENDING.String()
	statusAccepted = orderv1.Order_STATUS_ACCEPTED.String()
)

// acceptCounts reads, for an order (the last parameter; the first two are
// the ACCEPTED status), its status, the orders ACCEPTED in all and those
// of its customer: what AcceptBounds.Check needs. The counts read only
// ACCEPTED rows (indexed by status), at most AcceptBounds.Total of them.
const acceptCounts = `SELECT o.status,
	(SELECT count(*) FROM orders WHERE status = ?),
	(SELECT count(*) FROM orders a WHERE a.status = ? AND a.customer = o.customer)
	FROM orders o WHERE o.id = ?`

// acceptUpdate moves a PENDING order to ACCEPTED.
const acceptUpdate = `UPDATE orders SET status = ?, update_time = ? WHERE id = ? AND status = ?`

// Accept implements Store: the counts and the write in one transaction,
// which SQLite's single writer (BEGIN IMMEDIATE, sqlitedb) makes one step.
func (s *SQLiteStore) Accept(ctx context.Context, id string, now time.Time, b AcceptBounds) error {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("order store: begin: %w", err)
	}
	defer tx.Rollback()
	var st string
	var total, mine int
	err = tx.QueryRowContext(ctx, acceptCounts, statusAccepted, statusAccepted, id).Scan(&st, &total, &mine)
	if err := admit(st, total, mine, err, b); err != nil {
		return acceptErr(err)
	}
	res, err := tx.ExecContext(ctx, acceptUpdate, statusAccepted, now.UnixNano(), id, statusPending)
	if err := affected(res, err, "accept"); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("order store: commit: %w", err)
	}
	return nil
}

// admit turns what acceptCounts read (status st, the counts, or the
// error of reading them) into Accept's answer before its write: nil to
// go ahead.
func admit(st string, total, mine int, err error, b AcceptBounds) error {
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.Is(err, pgx.ErrNoRows):
		return ErrConflict
	case err != nil:
		return err
	case st != statusPending:
		return ErrConflict
	}
	return b.Check(total, mine)
}

// acceptErr is Accept's answer for err: the Store errors as they are,
// anything else wrapped.
func acceptErr(err error) error {
	switch {
	case err == nil, errors.Is(err, ErrConflict), errors.Is(err, ErrFull), errors.Is(err, ErrCustomerFull):
		return err
	}
	return fmt.Errorf("order store: accept: %w", err)
}

// Accepted implements Store.
func (s *SQLiteStore) Accepted(ctx context.Context, limit int) ([]*Record, error) {
	return s.query(ctx, `SELECT `+columns+` FROM orders WHERE status = ? ORDER BY create_time, id LIMIT ?`,
		statusAccepted, limit)
}

// acceptLock is the transaction-scoped advisory lock key that serialises
// PostgresStore.Accept across replicas, so the count and the write are one
// step under READ COMMITTED ("ACCEPTED" in ASCII).
const acceptLock = 0x4143434550544544

// Accept implements Store: the counts and the write in one transaction
// under an advisory lock shared by every replica. The lock is global, not
// per customer: AcceptBounds.Total needs every accept serialised anyway,
// and under it the customer's count cannot move either.
func (s *PostgresStore) Accept(ctx context.Context, id string, now time.Time, b AcceptBounds) error {
	err := s.DB.Retry(ctx, func() error {
		return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(acceptLock)); err != nil {
				return err
			}
			var st string
			var total, mine int
			err := tx.QueryRow(ctx, pgAcceptCounts, id).Scan(&st, &total, &mine)
			if err := admit(st, total, mine, err, b); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `UPDATE orders SET status = $1, update_time = $2 WHERE id = $3 AND status = $4`,
				statusAccepted, now.UnixNano(), id, statusPending)
			if err == nil && tag.RowsAffected() != 1 {
				return ErrConflict // changed since the read: READ COMMITTED
			}
			return err
		})
	})
	return acceptErr(err)
}

// pgAcceptCounts is acceptCounts on PostgreSQL, $1 the order. The status
// is a literal, as the partial index orders_accepted names it, so the
// planner can use that index for both counts.
const pgAcceptCounts = `SELECT o.status,
	(SELECT count(*) FROM orders WHERE status = 'STATUS_ACCEPTED'),
	(SELECT count(*) FROM orders a WHERE a.status = 'STATUS_ACCEPTED' AND a.customer = o.customer)
	FROM orders o WHERE o.id = $1`

// Accepted implements Store: like Pending, only orders this process holds
// or whose lease has lapsed.
func (s *PostgresStore) Accepted(ctx context.Context, limit int) ([]*Record, error) {
	return s.query(ctx, acceptedQuery, s.owner, limit)
}
