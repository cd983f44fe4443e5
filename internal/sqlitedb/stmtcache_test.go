package sqlitedb

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"
)

var kvSchema = fstest.MapFS{
	"migrations/0001_kv.sql": {Data: []byte(`CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT NOT NULL);`)},
}

// cached returns how many statements the writer connection caches.
func cached(t *testing.T, db *DB) int {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.Raw(func(dc any) error { n = len(dc.(*cachingConn).stmts); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStatementCache(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, db *DB)
		want int // statements cached afterwards
	}{
		{"a query repeated is prepared once", func(t *testing.T, db *DB) {
			for i := range 50 {
				if _, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, i, "x"); err != nil {
					t.Fatal(err)
				}
			}
		}, 1},
		{"the same query inside its own open rows", func(t *testing.T, db *DB) {
			for i := range 3 {
				if _, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, i, fmt.Sprint(i)); err != nil {
					t.Fatal(err)
				}
			}
			const q = `SELECT k, v FROM kv WHERE k >= ? ORDER BY k`
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			outer, err := tx.QueryContext(ctx, q, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for outer.Next() {
				var k int
				var v string
				if err := outer.Scan(&k, &v); err != nil {
					t.Fatal(err)
				}
				var inner int
				if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (`+q+`)`, k).Scan(&inner); err != nil {
					t.Fatal(err)
				}
				// The busy path: the outer statement is in use.
				var again string
				if err := tx.QueryRowContext(ctx, q, k).Scan(&k, &again); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s/%d/%s", v, inner, again))
			}
			if err := outer.Err(); err != nil {
				t.Fatal(err)
			}
			outer.Close()
			if want := "[0/3/0 1/2/1 2/1/2]"; fmt.Sprint(got) != want {
				t.Errorf("rows = %v, want %s", got, want)
			}
		}, 3},
		{"a failed statement leaves the cache usable", func(t *testing.T, db *DB) {
			const q = `INSERT INTO kv (k, v) VALUES (?, ?)`
			if _, err := db.ExecContext(ctx, q, 1, "a"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, q, 1, "b"); err == nil {
				t.Fatal("duplicate key inserted")
			}
			if _, err := db.ExecContext(ctx, q, 2, "c"); err != nil {
				t.Fatalf("after a failure: %v", err)
			}
		}, 1},
		{"the cache is bounded", func(t *testing.T, db *DB) {
			for i := range maxCachedStmts + 20 {
				var n int
				if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT %d`, i)).Scan(&n); err != nil || n != i {
					t.Fatalf("SELECT %d = %d, %v", i, n, err)
				}
			}
		}, maxCachedStmts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(ctx, filepath.Join(t.TempDir(), "kv.db"), kvSchema)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			base := cached(t, db) // the migrations' queries
			tt.run(t, db)
			got := cached(t, db) - base
			if tt.want == maxCachedStmts { // full: the bound counts every statement
				got += base
			}
			if got != tt.want {
				t.Errorf("cached statements = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestOneWriterManyReaders: concurrent write transactions queue on the one
// writer connection (none fails with SQLITE_BUSY) while reads go on.
func TestOneWriterManyReaders(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "kv.db"), kvSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 16 {
		wg.Go(func() {
			for i := range 20 {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					errs <- err
					return
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, 'w')`, w*100+i); err != nil {
					tx.Rollback()
					errs <- err
					return
				}
				if err := tx.Commit(); err != nil {
					errs <- err
					return
				}
				var n int
				if err := db.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM kv`).Scan(&n); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	if err := db.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM kv`).Scan(&n); err != nil || n != 320 {
		t.Errorf("rows = %d, %v; want 320", n, err)
	}
	if _, err := db.Reader().ExecContext(ctx, `DELETE FROM kv`); err == nil {
		t.Error("the read pool accepted a write")
	}
}
