package order

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/sqlitedb"
	"github.com/portico-gateway/portico/internal/telemetry"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// SQLiteStore is the Store on an embedded SQLite database.
type SQLiteStore struct {
	*sqlitedb.DB // Close, and Ping: the readiness probe
}

var _ Store = (*SQLiteStore)(nil)

// OpenSQLite opens (creating if needed) the order database at path and
// applies its migrations, creating its directory too; sqlitedb.Memory opens
// a private in-memory database.
func OpenSQLite(ctx context.Context, path string) (*SQLiteStore, error) {
	db, err := sqlitedb.Open(ctx, path, migrationFiles)
	if err != nil {
		return nil, err
	}
	return &SQLiteStore{db}, nil
}

const columns = `id, customer, idempotency_key, request_hash, status, lines, payment_method,
	total_minor, total_currency, reservation_id, payment_id, failure_reason, failure_info,
	create_time, update_time`

// insertOrder inserts an order unless its customer already used its
// idempotency key.
const insertOrder = `INSERT INTO orders (` + columns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (customer, idempotency_key) DO NOTHING`

// Create implements Store. A new key is one statement; a key already used
// is looked up and, should its order have been withdrawn meanwhile,
// inserted in one transaction (createTx).
func (s *SQLiteStore) Create(ctx context.Context, r *Record) (_ *Record, err error) {
	ctx, span := telemetry.StartDB(ctx, telemetry.SQLite, "tx create order")
	defer func() { telemetry.End(span, err) }()
	args, err := encodeRecord(r)
	if err != nil {
		return nil, err
	}
	res, err := s.DB.ExecContext(ctx, insertOrder, args...)
	if err != nil {
		return nil, fmt.Errorf("order store: insert: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, fmt.Errorf("order store: insert: %w", err)
	}
	if n == 1 {
		return nil, nil
	}
	return s.createTx(ctx, r, args)
}

// createTx returns the order stored under r's key, or inserts r when there
// is none. The transaction is BEGIN IMMEDIATE (sqlitedb), so the look-up
// and the insert see no concurrent writer in between.
func (s *SQLiteStore) createTx(ctx context.Context, r *Record, args []any) (*Record, error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("order store: begin: %w", err)
	}
	defer tx.Rollback()
	prev, err := scanRecord(tx.QueryRowContext(ctx,
		`SELECT `+columns+` FROM orders WHERE customer = ? AND idempotency_key = ?`,
		r.Order.GetCustomer(), r.IdempotencyKey))
	if err == nil {
		return prev, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, insertOrder, args...); err != nil {
		return nil, fmt.Errorf("order store: insert: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("order store: commit: %w", err)
	}
	return nil, nil
}

// Get implements Store.
func (s *SQLiteStore) Get(ctx context.Context, id string) (*Record, error) {
	return scanRecord(s.Reader().QueryRowContext(ctx, `SELECT `+columns+` FROM orders WHERE id = ?`, id))
}

// Update implements Store.
func (s *SQLiteStore) Update(ctx context.Context, r *Record, from orderv1.Order_Status) (err error) {
	ctx, span := telemetry.StartDB(ctx, telemetry.SQLite, "update order")
	defer func() { endUpdate(span, err) }()
	a, err := encodeRecord(r)
	if err != nil {
		return err
	}
	// a follows columns: 4 status, 5 lines, 7-8 total, 9 reservation,
	// 10 payment, 11-12 failure, 14 update_time.
	res, err := s.DB.ExecContext(ctx, `UPDATE orders SET status = ?, lines = ?, total_minor = ?,
		total_currency = ?, reservation_id = ?, payment_id = ?, failure_reason = ?, failure_info = ?,
		update_time = ? WHERE id = ? AND status = ?`,
		a[4], a[5], a[7], a[8], a[9], a[10], a[11], a[12], a[14], r.Order.GetId(), from.String())
	return affected(res, err, "update")
}

// Delete implements Store.
func (s *SQLiteStore) Delete(ctx context.Context, id string) error {
	res, err := s.DB.ExecContext(ctx, `DELETE FROM orders WHERE id = ? AND status = ?`,
		id, orderv1.Order_STATUS_PENDING.String())
	return affected(res, err, "delete")
}

func affected(res sql.Result, err error, op string) error {
	if err != nil {
		return fmt.Errorf("order store: %s: %w", op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("order store: %s: %w", op, err)
	}
	if n == 0 {
		return ErrConflict
	}
	return nil
}

// List implements Store.
func (s *SQLiteStore) List(ctx context.Context, q ListQuery) ([]*Record, error) {
	var where []string
	var args []any
	if q.Customer != "" {
		where = append(where, "customer = ?")
		args = append(args, q.Customer)
	}
	if q.After != nil {
		t := q.After.CreateTime.UnixNano()
		where = append(where, "(create_time < ? OR (create_time = ? AND id < ?))")
		args = append(args, t, t, q.After.ID)
	}
	query := `SELECT ` + columns + ` FROM orders`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY create_time DESC, id DESC LIMIT ?"
	return s.query(ctx, query, append(args, q.Limit)...)
}

// Pending implements Store.
func (s *SQLiteStore) Pending(ctx context.Context, createdBefore time.Time, limit int) ([]*Record, error) {
	return s.query(ctx, `SELECT `+columns+` FROM orders WHERE status = ? AND create_time <= ?
		ORDER BY create_time, id LIMIT ?`,
		orderv1.Order_STATUS_PENDING.String(), createdBefore.UnixNano(), limit)
}

func (s *SQLiteStore) query(ctx context.Context, query string, args ...any) ([]*Record, error) {
	rows, err := s.Reader().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("order store: query: %w", err)
	}
	defer rows.Close()
	var out []*Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("order store: query: %w", err)
	}
	return out, nil
}

// endUpdate ends an Update's span: ErrConflict is another run's write, a
// "conflict" event and not a failure.
func endUpdate(span trace.Span, err error) {
	if errors.Is(err, ErrConflict) {
		span.AddEvent("conflict")
		err = nil
	}
	telemetry.End(span, err)
}
