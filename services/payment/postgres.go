package payment

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/portico-gateway/portico/internal/pgdb"
)

//go:embed migrations/postgres/*.sql
var pgMigrations embed.FS

// Schema is the PostgreSQL schema of the payment tables.
const Schema = "payment"

// PostgresStore is the Store on PostgreSQL, shared by any number of payment
// replicas. Transactions run at READ COMMITTED. Tx.Key first takes a
// transaction advisory lock on the key, so of two replicas handling one key
// the second waits and then replays the first's payment; the partial
// unique index payments_one_capture_per_order refuses a second capture of
// an order whichever replica tries it (ErrOrderPaid).
type PostgresStore struct {
	*pgdb.DB // Close, and Ping: the readiness probe
}

var _ Store = (*PostgresStore)(nil)

// OpenPostgres connects to the database at url and applies the migrations
// to the payment schema (pgdb.Open).
func OpenPostgres(ctx context.Context, url string) (*PostgresStore, error) {
	db, err := pgdb.Open(ctx, url, Schema, pgMigrations)
	if err != nil {
		return nil, err
	}
	return &PostgresStore{db}, nil
}

// Payment implements Store.
func (s *PostgresStore) Payment(ctx context.Context, id string) (p Payment, err error) {
	err = s.DB.Retry(ctx, func() error {
		p, err = pgPayment(ctx, s.Pool, id, "")
		return err
	})
	return p, err
}

// Payments implements Store.
func (s *PostgresStore) Payments(ctx context.Context, orderID, after string, limit int) (out []Payment, err error) {
	query := `SELECT ` + paymentColumns + ` FROM payments WHERE order_id = $1`
	args := []any{orderID}
	if after != "" {
		query += ` AND (create_time, seq) > (SELECT create_time, seq FROM payments WHERE id = $2)`
		args = append(args, after)
	}
	query += fmt.Sprintf(` ORDER BY create_time, seq LIMIT $%d`, len(args)+1)
	args = append(args, limit)
	err = s.DB.Retry(ctx, func() error {
		rows, err := s.Pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Payment, error) { return scanPayment(r) })
		return err
	})
	return out, err
}

// InTx implements Store: one READ COMMITTED transaction, run again on a
// retryable failure (pgdb.DB.InTx), so fn may run more than once.
func (s *PostgresStore) InTx(ctx context.Context, fn func(Tx) error) error {
	return s.DB.InTx(ctx, func(tx pgx.Tx) error { return fn(&pgTx{tx: tx}) })
}

func pgPayment(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, id, lock string) (Payment, error) {
	p, err := scanPayment(q.QueryRow(ctx, `SELECT `+paymentColumns+` FROM payments WHERE id = $1 `+lock, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Payment{}, ErrNotFound
	}
	return p, err
}

// pgTx is the Tx of PostgresStore.InTx.
type pgTx struct {
	tx pgx.Tx
}

var _ Tx = (*pgTx)(nil)

// Key takes the key's advisory lock for the rest of the transaction before
// reading it.
func (t *pgTx) Key(ctx context.Context, key string) (Key, error) {
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+pgdb.LockKey+`)`, "key:"+key); err != nil {
		return Key{}, err
	}
	k := Key{Key: key}
	err := t.tx.QueryRow(ctx,
		`SELECT request_hash, payment_id FROM idempotency_keys WHERE idem_key = $1`, key,
	).Scan(&k.RequestHash, &k.PaymentID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Key{}, ErrNotFound
	}
	return k, err
}

// Payment locks the payment's row until the transaction ends.
func (t *pgTx) Payment(ctx context.Context, id string) (Payment, error) {
	return pgPayment(ctx, t.tx, id, "FOR UPDATE")
}

func (t *pgTx) Captured(ctx context.Context, orderID string) (bool, error) {
	var found bool
	err := t.tx.QueryRow(ctx,
		`SELECT EXISTS (SELECT 1 FROM payments WHERE order_id = $1 AND status = 'CAPTURED')`, orderID,
	).Scan(&found)
	return found, err
}

func (t *pgTx) InsertPayment(ctx context.Context, p Payment, key Key) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO payments (`+paymentColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		p.ID, p.OrderID, p.Amount.Minor, p.Amount.Currency, p.Method, p.Status, p.FailureReason,
		nanos(p.CreateTime), nanos(p.UpdateTime))
	if pgdb.IsUnique(err, "payments_one_capture_per_order") {
		return ErrOrderPaid
	}
	if err != nil {
		return err
	}
	_, err = t.tx.Exec(ctx,
		`INSERT INTO idempotency_keys (idem_key, request_hash, payment_id, create_time) VALUES ($1, $2, $3, $4)`,
		key.Key, key.RequestHash, key.PaymentID, nanos(p.CreateTime))
	if pgdb.IsUnique(err, "idempotency_keys_pkey") {
		return ErrKeyExists
	}
	return err
}

func (t *pgTx) SetStatus(ctx context.Context, id string, s Status, now time.Time) error {
	tag, err := t.tx.Exec(ctx, `UPDATE payments SET status = $1, update_time = $2 WHERE id = $3`, s, nanos(now), id)
	return pgOneRow(tag, err)
}

func pgOneRow(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// Tables returns the payment tables, parents first: what `portico migrate`
// copies from SQLite.
func Tables() []string { return []string{"payments", "idempotency_keys"} }
