package payment

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

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

// Payment implements Store.
func (s *SQLiteStore) Payment(ctx context.Context, id string) (Payment, error) {
	return getPayment(ctx, s.Reader(), id)
}

// Payments implements Store.
func (s *SQLiteStore) Payments(ctx context.Context, orderID, after string, limit int) ([]Payment, error) {
	query := `SELECT ` + paymentColumns + ` FROM payments WHERE order_id = ?`
	args := []any{orderID}
	if after != "" {
		// Keyset: the position of payment after in the same order as the
		// listing; an unknown id yields no rows.
		query += ` AND (create_time, rowid) > (SELECT create_time, rowid FROM payments WHERE id = ?)`
		args = append(args, after)
	}
	rows, err := s.Reader().QueryContext(ctx, query+` ORDER BY create_time, rowid LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Payment
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
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

// sqliteTx is the Tx of SQLiteStore.InTx.
type sqliteTx struct {
	tx *sql.Tx
}

var _ Tx = (*sqliteTx)(nil)

func (t *sqliteTx) Key(ctx context.Context, key string) (Key, error) {
	k := Key{Key: key}
	err := t.tx.QueryRowContext(ctx,
		`SELECT request_hash, payment_id FROM idempotency_keys WHERE idem_key = ?`, key,
	).Scan(&k.RequestHash, &k.PaymentID)
	if errors.Is(err, sql.ErrNoRows) {
		return Key{}, ErrNotFound
	}
	return k, err
}

func (t *sqliteTx) Payment(ctx context.Context, id string) (Payment, error) {
	return getPayment(ctx, t.tx, id)
}

func (t *sqliteTx) Captured(ctx context.Context, orderID string) (bool, error) {
	var found bool
	err := t.tx.QueryRowContext(ctx,
		`SELECT EXISTS (SELECT 1 FROM payments WHERE order_id = ? AND status = 'CAPTURED')`, orderID,
	).Scan(&found)
	return found, err
}

// InsertPayment inserts the payment first, so a unique violation there is
// the one-capture index and one on the key insert is the key.
func (t *sqliteTx) InsertPayment(ctx context.Context, p Payment, key Key) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO payments (`+paymentColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.OrderID, p.Amount.Minor, p.Amount.Currency, p.Method, p.Status, p.FailureReason,
		nanos(p.CreateTime), nanos(p.UpdateTime))
	if constraint(err) == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
		return ErrOrderPaid
	}
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx,
		`INSERT INTO idempotency_keys (idem_key, request_hash, payment_id, create_time) VALUES (?, ?, ?, ?)`,
		key.Key, key.RequestHash, key.PaymentID, nanos(p.CreateTime))
	if c := constraint(err); c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || c == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
		return ErrKeyExists
	}
	return err
}

func (t *sqliteTx) SetStatus(ctx context.Context, id string, s Status, now time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE payments SET status = ?, update_time = ? WHERE id = ?`, s, nanos(now), id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errors.Join(ErrNotFound, err)
	}
	return nil
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const paymentColumns = `id, order_id, amount_minor, currency, method, status, failure_reason, create_time, update_time`

func getPayment(ctx context.Context, q querier, id string) (Payment, error) {
	p, err := scanPayment(q.QueryRowContext(ctx, `SELECT `+paymentColumns+` FROM payments WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Payment{}, ErrNotFound
	}
	return p, err
}

func scanPayment(row interface{ Scan(...any) error }) (Payment, error) {
	var p Payment
	var created, updated int64
	err := row.Scan(&p.ID, &p.OrderID, &p.Amount.Minor, &p.Amount.Currency, &p.Method, &p.Status,
		&p.FailureReason, &created, &updated)
	p.CreateTime, p.UpdateTime = fromNanos(created), fromNanos(updated)
	return p, err
}

// constraint returns the SQLite extended result code of a constraint
// violation, or 0.
func constraint(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT {
		return se.Code()
	}
	return 0
}

// Times are stored as Unix nanoseconds and read back in UTC.
func nanos(t time.Time) int64     { return t.UnixNano() }
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
