package pgdb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is an open database: a pool whose connections use one schema.
type DB struct {
	*pgxpool.Pool
	schema string
}

// IsURL reports whether a --db value names a PostgreSQL database
// (postgres:// or postgresql://) rather than an SQLite path.
func IsURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// LocationWant says what a --db value (a service's Config.DB) may be.
const LocationWant = "want an SQLite file path or a postgres://user@host:port/db (or postgresql://) URL"

// CheckLocation reports why db names no database a service can open, or
// nil: it is empty, or a URL (it holds "://") of another scheme than
// postgres:// or postgresql://, which would otherwise be taken for an
// SQLite path ("mysql://root@host/x" a directory "mysql:/root@host").
// Anything else is an SQLite path. The error never repeats db, which may
// hold a password.
func CheckLocation(db string) error {
	if strings.TrimSpace(db) == "" {
		return errors.New("empty; " + LocationWant)
	}
	if scheme, _, ok := strings.Cut(db, "://"); ok && !IsURL(db) {
		if !urlScheme.MatchString(scheme) {
			scheme = "?" // not a scheme: it might be a password
		}
		return fmt.Errorf("a %s:// URL is not supported; %s", scheme, LocationWant)
	}
	return nil
}

// idleInTx is the PostgreSQL setting that ends a session idle inside a
// transaction.
const idleInTx = "idle_in_transaction_session_timeout"

// DefaultIdleInTransactionTimeout is every connection's
// idle_in_transaction_session_timeout unless the URL sets one: a replica cut
// off the network (or frozen) in the middle of a transaction would
// otherwise hold its row locks until TCP gives up, hours later, and every
// other replica's writes to those rows would wait for it. The services'
// transactions send their statements back to back, so a healthy one is
// never idle that long.
const DefaultIdleInTransactionTimeout = "5s"

// DefaultMaxConns is every pool's size unless the URL sets pool_max_conns.
// A write holds its connection while its commit waits for the WAL flush
// (milliseconds on a real disk), so the pool, not the CPU, bounds how many
// commits one flush can group: pgxpool's own default (the larger of 4 and
// the number of CPUs) made the pool the order saga's bottleneck on a
// 2-CPU host (BenchmarkCreateOrderPostgres: 0.23-0.26 of SQLite's orders/s
// with 4, 0.38-0.42 with 16). Connections open only as concurrent calls
// need them; a replica set (three services) may open 48, so two fit in
// PostgreSQL's default max_connections (100); set pool_max_conns for more.
const DefaultMaxConns = 16

// urlScheme is RFC 3986's scheme syntax.
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

var schemaName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,30}$`)

// Open connects to the database at url, creates schema if needed, makes it
// every connection's search_path, and applies the pending migrations from
// migrations/postgres/ in migrations under an advisory lock.
func Open(ctx context.Context, url, schema string, migrations fs.FS) (*DB, error) {
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("pgdb: schema %q: want a lower-case identifier", schema)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgdb: %w", err) // pgconn's parse errors never echo the password
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	if _, set := cfg.ConnConfig.RuntimeParams[idleInTx]; !set {
		cfg.ConnConfig.RuntimeParams[idleInTx] = DefaultIdleInTransactionTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgdb: %w", err)
	}
	db := &DB{Pool: pool, schema: schema}
	if err := db.migrate(ctx, migrations); err != nil {
		pool.Close()
		if cerr := connectErr(cfg.ConnConfig, err); cerr != nil {
			return nil, cerr
		}
		return nil, fmt.Errorf("pgdb: migrate schema %s: %w", schema, err)
	}
	return db, nil
}

// Schema returns the schema the DB's connections use.
func (d *DB) Schema() string { return d.schema }

// Close closes every connection of the pool. It always returns nil; it
// returns an error so a DB closes like an sqlitedb.DB.
func (d *DB) Close() error {
	d.Pool.Close()
	return nil
}

// Ping reports whether the database answers: the readiness probe.
func (d *DB) Ping(ctx context.Context) error { return d.Pool.Ping(ctx) }

// LockKey returns the advisory lock key of name within the DB's schema,
// for pg_advisory_xact_lock: a 64-bit hash computed by the server
// (hashtextextended), so every process agrees on it.
const LockKey = `hashtextextended(current_schema() || ':' || $1, 0)`

func (d *DB) migrate(ctx context.Context, migrations fs.FS) error {
	files, err := fs.Glob(migrations, "migrations/postgres/*.sql")
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return errors.New("no migrations/postgres/*.sql")
	}
	sort.Strings(files)
	conn, err := d.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	// A session lock on its own connection: replicas starting together
	// queue here, and the first applies what the others then find applied.
	// The schema is created under the lock too (CREATE SCHEMA IF NOT EXISTS
	// can race with itself).
	lock := `hashtextextended('portico.migrate:' || $1, 0)`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+lock+`)`, d.schema); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+lock+`)`, d.schema)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+d.schema); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	for _, name := range files {
		if err := apply(ctx, conn.Conn(), migrations, name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func apply(ctx context.Context, conn *pgx.Conn, migrations fs.FS, name string) error {
	num, _, ok := strings.Cut(path.Base(name), "_")
	v, err := strconv.Atoi(num)
	if !ok || err != nil || v <= 0 {
		return fmt.Errorf("want NNNN_description.sql")
	}
	body, err := fs.ReadFile(migrations, name)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var done bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, v).Scan(&done); err != nil || done {
			return err
		}
		if _, err := tx.Exec(ctx, string(body)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, v, path.Base(name))
		return err
	})
}
