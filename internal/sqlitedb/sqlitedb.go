// Package sqlitedb opens a service's embedded SQLite database (modernc.org/
// sqlite, no cgo) the way every Portico service needs it: WAL journal, a busy
// timeout instead of SQLITE_BUSY errors, foreign keys on, write transactions
// that take the write lock up front (BEGIN IMMEDIATE, so two writers never
// deadlock upgrading a read lock), and the service's embedded migrations
// applied in order, each exactly once.
//
// Migrations are files named NNNN_description.sql in the FS's migrations/
// directory (what a service's //go:embed migrations/*.sql holds); the
// applied version is kept in the table schema_migrations.
//
// A background checkpointer (CheckpointInterval) copies the WAL into the
// database file, so no commit waits for a checkpoint's syncs.
//
// Writes go through one connection (the embedded *sql.DB holds at most
// one), so writers queue in Go, honouring their context, instead of
// meeting SQLITE_BUSY and sleeping in SQLite's busy handler (1, 2, 5, 10
// ms...); reads use Reader, a separate read-only pool that WAL lets run
// beside the writer.
//
// Each connection keeps its statements prepared, BEGIN, COMMIT and
// ROLLBACK too (stmtcache.go, tx.go). A statement inside a transaction is
// not interrupted when its context ends: the transaction is, by
// database/sql, at its next statement or its COMMIT.
//
// A service's store embeds the *DB that Open returns: its Close, and its
// Ping(ctx), the service's readiness probe, become the store's.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"modernc.org/sqlite"
)

// ErrNotWritable means the database opened, but this process cannot write
// it (SQLite falls back to read-only when the file is write-protected).
var ErrNotWritable = errors.New("sqlitedb: the database cannot be written")

// Memory is the path that opens a private in-memory database, for tests.
const Memory = ":memory:"

// DB is an open database. The embedded *sql.DB is the writer: use it for
// every write and write transaction, and Reader for reads outside one.
type DB struct {
	*sql.DB
	read *sql.DB       // == DB for Memory
	ckpt *checkpointer // nil for Memory
	path string        // Memory for Memory
}

// Ping reports whether the database answers and its file can still be
// written (ErrNotWritable otherwise: made read-only, or its file system
// remounted read-only, since Open), so the readiness probe it answers
// says when writes would fail. The check is an access(2) call: it takes
// no lock and never waits for the writer.
func (d *DB) Ping(ctx context.Context) error {
	if err := d.PingContext(ctx); err != nil {
		return err
	}
	if d.path == Memory {
		return nil
	}
	return writable(d.path)
}

// Reader is the pool for reads outside a transaction. Its connections are
// query_only, so a write sent to it fails instead of contending with the
// writer.
func (d *DB) Reader() *sql.DB { return d.read }

// Close closes the writer, the read pool and the checkpointer.
func (d *DB) Close() error {
	err := d.DB.Close()
	if d.read != d.DB {
		err = errors.Join(err, d.read.Close())
	}
	if d.ckpt != nil {
		err = errors.Join(err, d.ckpt.Close())
	}
	return err
}

// Open opens the database at path, creating the file (not its directory,
// which must exist) if needed, and applies the pending migrations from
// migrations/ in migrations. It refuses a file this process cannot write
// (ErrNotWritable) rather than serve read-only, and proves a write
// transaction before it returns.
func Open(ctx context.Context, path string, migrations fs.FS) (*DB, error) {
	if path == "" {
		return nil, fmt.Errorf("sqlitedb: empty path")
	}
	if path != Memory {
		if err := checkPath(path); err != nil {
			return nil, err
		}
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + path + "?" + q.Encode()
	if path != Memory {
		q.Add("_pragma", "journal_mode(WAL)")
		w := cloneValues(q)
		w.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", inlineCheckpointPages))
		dsn = "file:" + filepath.ToSlash(path) + "?" + w.Encode()
	}
	db, err := open(dsn, true)
	if err != nil {
		return nil, fmt.Errorf("sqlitedb: open %s: %w", path, err)
	}
	// One writer. For Memory it is also the only connection: each
	// connection to :memory: is a separate database.
	db.SetMaxOpenConns(1)
	if err := migrate(ctx, db, migrations); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitedb: migrate %s: %w", path, err)
	}
	if err := proveWrite(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrNotWritable, path, err)
	}
	out := &DB{DB: db, read: db, path: path}
	if path != Memory {
		q.Del("_txlock")
		ckpt, err := open("file:"+filepath.ToSlash(path)+"?"+q.Encode(), false)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("sqlitedb: open %s for checkpoints: %w", path, err)
		}
		ckpt.SetMaxOpenConns(1)
		q.Add("_pragma", "query_only(1)")
		if out.read, err = open("file:"+filepath.ToSlash(path)+"?"+q.Encode(), false); err != nil {
			db.Close()
			ckpt.Close()
			return nil, fmt.Errorf("sqlitedb: open %s for reading: %w", path, err)
		}
		out.ckpt = startCheckpointer(ckpt, CheckpointInterval)
	}
	return out, nil
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// open opens dsn with a statement cache per connection; immediate says
// that its write transactions begin IMMEDIATE (the writer's _txlock).
func open(dsn string, immediate bool) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(cachingConnector{Connector: c, immediate: immediate}), nil
}

func migrate(ctx context.Context, db *sql.DB, migrations fs.FS) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`); err != nil {
		return err
	}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, name := range files {
		v, err := version(name)
		if err != nil {
			return err
		}
		if err := apply(ctx, db, migrations, name, v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func version(name string) (int, error) {
	num, _, ok := strings.Cut(path.Base(name), "_")
	v, err := strconv.Atoi(num)
	if !ok || err != nil || v <= 0 {
		return 0, fmt.Errorf("migration %q: want NNNN_description.sql", name)
	}
	return v, nil
}

func apply(ctx context.Context, db *sql.DB, migrations fs.FS, name string, v int) error {
	body, err := fs.ReadFile(migrations, name)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, v).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version) VALUES (?)`, v); err != nil {
		return err
	}
	return tx.Commit()
}
