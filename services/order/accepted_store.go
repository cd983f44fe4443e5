package order

import (
	"context"
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

// Accept implements Store: one conditional UPDATE, which SQLite's single
// writer makes atomic with its count.
func (s *SQLiteStore) Accept(ctx context.Context, id string, now time.Time, limit int) error {
	res, err := s.DB.ExecContext(ctx, `UPDATE orders SET status = ?, update_time = ?
		WHERE id = ? AND status = ? AND (SELECT count(*) FROM orders WHERE status = ?) < ?`,
		statusAccepted, now.UnixNano(), id, statusPending, statusAccepted, limit)
	if err := affected(res, err, "accept"); !errors.Is(err, ErrConflict) {
		return err
	}
	return whyNotAccepted(s.Get(ctx, id))
}

// Accepted implements Store.
func (s *SQLiteStore) Accepted(ctx context.Context, limit int) ([]*Record, error) {
	return s.query(ctx, `SELECT `+columns+` FROM orders WHERE status = ? ORDER BY create_time, id LIMIT ?`,
		statusAccepted, limit)
}

// whyNotAccepted tells apart the two reasons an Accept changed nothing: the
// order is still PENDING (the bound was reached) or it is not.
func whyNotAccepted(r *Record, err error) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return ErrConflict
	case err != nil:
		return fmt.Errorf("order store: accept: %w", err)
	case r.Order.GetStatus() == orderv1.Order_STATUS_PENDING:
		return ErrFull
	}
	return ErrConflict
}

// acceptLock is the transaction-scoped advisory lock key that serialises
// PostgresStore.Accept across replicas, so the count and the write are one
// step under READ COMMITTED ("ACCEPTED" in ASCII).
const acceptLock = 0x4143434550544544

// Accept implements Store: the bound's count and the write in one
// transaction under an advisory lock shared by every replica.
func (s *PostgresStore) Accept(ctx context.Context, id string, now time.Time, limit int) error {
	var n int64
	err := s.DB.Retry(ctx, func() error {
		return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(acceptLock)); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `UPDATE orders SET status = $1, update_time = $2
				WHERE id = $3 AND status = $4 AND (SELECT count(*) FROM orders WHERE status = 'STATUS_ACCEPTED') < $5`,
				statusAccepted, now.UnixNano(), id, statusPending, limit)
			n = tag.RowsAffected()
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("order store: accept: %w", err)
	}
	if n == 1 {
		return nil
	}
	return whyNotAccepted(s.Get(ctx, id))
}

// Accepted implements Store: like Pending, only orders this process holds
// or whose lease has lapsed.
func (s *PostgresStore) Accepted(ctx context.Context, limit int) ([]*Record, error) {
	return s.query(ctx, acceptedQuery, s.owner, limit)
}
