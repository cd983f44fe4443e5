package sqlitedb

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"maps"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// controls returns the control statements the writer connection keeps.
func controls(t *testing.T, db *DB) map[string]driver.Stmt {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var out map[string]driver.Stmt
	if err := conn.Raw(func(dc any) error { out = maps.Clone(dc.(*cachingConn).control); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTransactionsReuseControlStatements: BEGIN IMMEDIATE, COMMIT and
// ROLLBACK are prepared once per connection, whatever the number of
// transactions.
func TestTransactionsReuseControlStatements(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "kv.db"), kvSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run := func(k int, commit bool) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, 'x')`, k); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	run(0, true)
	run(1, false)
	first := controls(t, db)
	for k := 2; k < 20; k++ {
		run(k, k%2 == 0)
	}
	got := controls(t, db)
	if want := []string{"BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"}; !slices.Equal(slices.Sorted(maps.Keys(got)), want) {
		t.Fatalf("control statements = %v, want %v", slices.Sorted(maps.Keys(got)), want)
	}
	for q, s := range got {
		if first[q] != s {
			t.Errorf("%s prepared again", q)
		}
	}
	var n int
	if err := db.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM kv`).Scan(&n); err != nil || n != 10 {
		t.Errorf("rows = %d, %v; want the 10 committed", n, err)
	}
}

// TestWriteTransactionHoldsWriteLock: a write transaction on the writer
// takes the write lock at BEGIN (IMMEDIATE), so another process's writer
// is refused at once; a read-only one on the writer does not.
func TestWriteTransactionHoldsWriteLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kv.db")
	db, err := Open(ctx, path, kvSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tests := []struct {
		name     string
		opts     *sql.TxOptions
		wantBusy bool
	}{
		{"write", nil, true},
		{"read-only", &sql.TxOptions{ReadOnly: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx, err := db.BeginTx(ctx, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			otx, err := other.BeginTx(ctx, nil)
			if err == nil {
				otx.Rollback()
			}
			var se *sqlite.Error
			busy := errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
			if busy != tt.wantBusy {
				t.Errorf("another writer's BEGIN IMMEDIATE = %v, want busy %v", err, tt.wantBusy)
			}
		})
	}
}

// TestFailedCommitLeavesWriterUsable: a COMMIT refused by a deferred
// foreign key rolls the transaction back, and the one writer connection
// serves the next transaction.
func TestFailedCommitLeavesWriterUsable(t *testing.T) {
	ctx := context.Background()
	schema := fstest.MapFS{"migrations/0001_fk.sql": {Data: []byte(`
		CREATE TABLE parent (id INTEGER PRIMARY KEY);
		CREATE TABLE child (id INTEGER PRIMARY KEY,
			parent INTEGER NOT NULL REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);`)}}
	db, err := Open(ctx, filepath.Join(t.TempDir(), "fk.db"), schema)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO child (id, parent) VALUES (1, 42)`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("COMMIT of a dangling foreign key succeeded")
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("BEGIN after a failed COMMIT: %v", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO parent (id) VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("COMMIT after a failed COMMIT: %v", err)
	}
	var children, parents int
	if err := db.Reader().QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM child), (SELECT COUNT(*) FROM parent)`).Scan(&children, &parents); err != nil || children != 0 || parents != 1 {
		t.Errorf("children, parents = %d, %d, %v; want 0, 1", children, parents, err)
	}
}

// watchers counts the goroutines the driver runs to watch a statement's
// context, as seen from inside a statement (the SQL function
// sqlitedb_watchers()).
func init() {
	sqlite.MustRegisterScalarFunction("sqlitedb_watchers", 0, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		var b bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
			return nil, err
		}
		return int64(strings.Count(b.String(), "modernc.org/sqlite.interruptOnDone")), nil
	})
}

// TestStatementsInTransactionAreNotWatched: a statement inside a
// transaction runs without a goroutine watching its context (the
// transaction's context bounds it through database/sql), while one outside
// a transaction is watched by the driver.
func TestStatementsInTransactionAreNotWatched(t *testing.T) {
	db, err := Open(context.Background(), Memory, kvSchema) // one connection, no checkpointer
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var inTx int
	if err := tx.QueryRowContext(ctx, `SELECT sqlitedb_watchers()`).Scan(&inTx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var outside int
	if err := db.QueryRowContext(ctx, `SELECT sqlitedb_watchers()`).Scan(&outside); err != nil {
		t.Fatal(err)
	}
	if inTx != 0 || outside == 0 {
		t.Errorf("watchers in a transaction = %d, outside = %d; want 0 and at least 1", inTx, outside)
	}
}
