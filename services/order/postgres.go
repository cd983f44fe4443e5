package order

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/pgdb"
	"github.com/portico-gateway/portico/internal/telemetry"
)

//go:embed migrations/postgres/*.sql
var pgMigrationFiles embed.FS

// Schema is the PostgreSQL schema of the order tables ("order" is a
// reserved word).
const Schema = "orders"

// DefaultLeaseTTL is how long an order process holds a PENDING order
// without renewing its lease. A dead process's orders are taken over by
// another's reconciler at most DefaultLeaseTTL plus one reconcile interval
// after it last renewed them: about 32s with the defaults, well inside the
// 60s the issue allows. It exceeds DefaultBudget, so a live run's lease
// does not lapse under it.
const DefaultLeaseTTL = 30 * time.Second

// Lease is how a PostgresStore lends PENDING orders to one order process at
// a time.
type Lease struct {
	// Owner names this process in the lease column. "" means a random id
	// (a restarted process is a new owner, and its old leases lapse).
	Owner string
	// TTL is how long a lease lasts without renewal. 0 means
	// DefaultLeaseTTL; negative is an error.
	TTL time.Duration
}

// PostgresStore is the Store on PostgreSQL, shared by any number of order
// replicas. UNIQUE (customer, idempotency_key) makes one order per key per
// customer whichever replica the calls reach (Create inserts with ON
// CONFLICT DO NOTHING, then reads the winner); Update and Delete are single
// conditional statements. Each PENDING order carries a lease (owner and
// expiry, on the database's clock): Create leases the new order to its
// creator, Pending lists only orders whose lease is this process's or has
// lapsed, and Lease takes one over, so one replica at a time drives an
// order and a dead replica's orders pass to another once their lease
// lapses.
type PostgresStore struct {
	*pgdb.DB // Close, and Ping: the readiness probe
	owner    string
	ttl      time.Duration
}

var _ Store = (*PostgresStore)(nil)

// OpenPostgres connects to the database at url and applies the migrations
// to the order schema (pgdb.Open).
func OpenPostgres(ctx context.Context, url string, lease Lease) (*PostgresStore, error) {
	if lease.TTL < 0 {
		return nil, errors.New("order: negative Lease.TTL")
	}
	if lease.TTL == 0 {
		lease.TTL = DefaultLeaseTTL
	}
	if lease.Owner == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		lease.Owner = "order-" + hex.EncodeToString(b[:])
	}
	db, err := pgdb.Open(ctx, url, Schema, pgMigrationFiles)
	if err != nil {
		return nil, err
	}
	return &PostgresStore{DB: db, owner: lease.Owner, ttl: lease.TTL}, nil
}

// Owner returns the name this store leases orders under.
func (s *PostgresStore) Owner() string { return s.owner }

// leaseUntil is the SQL for "now plus the TTL" on the database's clock;
// its one parameter is the TTL in microseconds.
const leaseUntil = `clock_timestamp() + make_interval(secs => $%d::bigint / 1e6)`

// Create implements Store. Its span is SQLiteStore.Create's, on
// PostgreSQL ("postgresql tx create order").
func (s *PostgresStore) Create(ctx context.Context, r *Record) (_ *Record, err error) {
	ctx, span := telemetry.StartDB(ctx, telemetry.Postgres, "tx create order")
	defer func() { telemetry.End(span, err) }()
	args, err := encodeRecord(r)
	if err != nil {
		return nil, err
	}
	ph := make([]string, len(args))
	for i := range ph {
		ph[i] = fmt.Sprintf("$%d", i+1)
	}
	insert := `INSERT INTO orders (` + columns + `, lease_owner, lease_until) VALUES (` + strings.Join(ph, ", ") +
		fmt.Sprintf(`, $%d, `+leaseUntil+`)`, len(args)+1, len(args)+2) +
		` ON CONFLICT (customer, idempotency_key) DO NOTHING`
	args = append(args, s.owner, s.ttl.Microseconds())
	var prev *Record
	err = s.DB.Retry(ctx, func() error {
		prev = nil
		tag, err := s.Pool.Exec(ctx, insert, args...)
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		// The key is taken: the winner's order, committed before our
		// statement returned. A withdrawal (Delete) in between frees the
		// key again; the next attempt then inserts.
		prev, err = scanRecord(s.Pool.QueryRow(ctx, `SELECT `+columns+` FROM orders WHERE customer = $1 AND idempotency_key = $2`,
			r.Order.GetCustomer(), r.IdempotencyKey))
		if errors.Is(err, ErrNotFound) {
			return errKeyFreed
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("order store: create: %w", err)
	}
	return prev, nil
}

// errKeyFreed makes Retry run Create again: the key's order was withdrawn
// between the insert and the read.
var errKeyFreed = &pgRetry{"idempotency key freed between insert and read"}

// pgRetry is an error pgdb.Retryable accepts: it claims SafeToRetry, as the
// statement it reports changed nothing.
type pgRetry struct{ msg string }

func (e *pgRetry) Error() string     { return e.msg }
func (e *pgRetry) SafeToRetry() bool { return true }

// Get implements Store.
func (s *PostgresStore) Get(ctx context.Context, id string) (r *Record, err error) {
	err = s.DB.Retry(ctx, func() error {
		r, err = scanRecord(s.Pool.QueryRow(ctx, `SELECT `+columns+` FROM orders WHERE id = $1`, id))
		return err
	})
	return r, err
}

// Update implements Store: one conditional statement, so of two replicas
// writing one order only the first to leave status from succeeds. Its span
// is SQLiteStore.Update's, on PostgreSQL ("postgresql update order").
func (s *PostgresStore) Update(ctx context.Context, r *Record, from orderv1.Order_Status) (err error) {
	ctx, span := telemetry.StartDB(ctx, telemetry.Postgres, "update order")
	defer func() { endUpdate(span, err) }()
	a, err := encodeRecord(r)
	if err != nil {
		return err
	}
	// a follows columns: 4 status, 5 lines, 7-8 total, 9 reservation,
	// 10 payment, 11-12 failure, 14 update_time.
	return s.DB.Retry(ctx, func() error {
		tag, err := s.Pool.Exec(ctx, `UPDATE orders SET status = $1, lines = $2, total_minor = $3,
			total_currency = $4, reservation_id = $5, payment_id = $6, failure_reason = $7, failure_info = $8,
			update_time = $9 WHERE id = $10 AND status = $11`,
			a[4], a[5], a[7], a[8], a[9], a[10], a[11], a[12], a[14], r.Order.GetId(), from.String())
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrConflict
		}
		return nil
	})
}

// Delete implements Store.
func (s *PostgresStore) Delete(ctx context.Context, id string) error {
	return s.DB.Retry(ctx, func() error {
		tag, err := s.Pool.Exec(ctx, `DELETE FROM orders WHERE id = $1 AND status = $2`,
			id, orderv1.Order_STATUS_PENDING.String())
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrConflict
		}
		return nil
	})
}

// List implements Store.
func (s *PostgresStore) List(ctx context.Context, q ListQuery) ([]*Record, error) {
	var where []string
	var args []any
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if q.Customer != "" {
		where = append(where, "customer = "+arg(q.Customer))
	}
	if q.After != nil {
		t, id := arg(q.After.CreateTime.UnixNano()), arg(q.After.ID)
		where = append(where, "(create_time, id) < ("+t+", "+id+")")
	}
	query := `SELECT ` + columns + ` FROM orders`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY create_time DESC, id DESC LIMIT " + arg(q.Limit)
	return s.query(ctx, query, args...)
}

// pendingQuery lists PENDING orders for Pending. The status is a literal,
// not a parameter, so that a generic plan (pgx prepares its statements)
// still matches the partial index orders_pending; likewise acceptedQuery
// and orders_accepted.
const (
	pendingQuery = `SELECT ` + columns + ` FROM orders WHERE status = 'STATUS_PENDING' AND create_time <= $1
		AND (lease_owner = $2 OR lease_until <= clock_timestamp())
		ORDER BY create_time, id LIMIT $3`
	acceptedQuery = `SELECT ` + columns + ` FROM orders WHERE status = 'STATUS_ACCEPTED'
		AND (lease_owner = $1 OR lease_until <= clock_timestamp())
		ORDER BY create_time, id LIMIT $2`
)

// Pending implements Store: the PENDING orders created at or before
// createdBefore that this process holds or whose lease has lapsed, so the
// orders another live replica drives never crowd this one's batch.
func (s *PostgresStore) Pending(ctx context.Context, createdBefore time.Time, limit int) ([]*Record, error) {
	return s.query(ctx, pendingQuery, createdBefore.UnixNano(), s.owner, limit)
}

// Lease takes or renews this process's lease on PENDING or ACCEPTED order
// id for the TTL. It reports false, changing nothing, when the order is
// neither or another process holds an unexpired lease: one conditional
// UPDATE, so of two replicas racing for a lapsed lease exactly one wins.
func (s *PostgresStore) Lease(ctx context.Context, id string) (bool, error) {
	var won bool
	err := s.DB.Retry(ctx, func() error {
		tag, err := s.Pool.Exec(ctx, `UPDATE orders SET lease_owner = $1, lease_until = `+fmt.Sprintf(leaseUntil, 2)+`
			WHERE id = $3 AND status IN ($4, $5) AND (lease_owner = $1 OR lease_until <= clock_timestamp())`,
			s.owner, s.ttl.Microseconds(), id, statusPending, statusAccepted)
		won = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("order store: lease %s: %w", id, err)
	}
	return won, nil
}

func (s *PostgresStore) query(ctx context.Context, query string, args ...any) (out []*Record, err error) {
	err = s.DB.Retry(ctx, func() error {
		rows, err := s.Pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Record, error) { return scanRecord(r) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("order store: query: %w", err)
	}
	return slices.Clip(out), nil
}

// Tables returns the order tables, parents first: what `portico migrate`
// copies from SQLite.
func Tables() []string { return []string{"orders"} }
