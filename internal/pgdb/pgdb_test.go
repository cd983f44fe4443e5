package pgdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/goleak"

	"github.com/portico-gateway/portico/internal/pgtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var testMigrations = fstest.MapFS{
	"migrations/postgres/0001_init.sql": {Data: []byte(`CREATE TABLE t (id integer PRIMARY KEY, n integer NOT NULL DEFAULT 0);`)},
	"migrations/postgres/0002_more.sql": {Data: []byte(`CREATE TABLE u (id integer PRIMARY KEY); CREATE INDEX t_n ON t (n);`)},
	"migrations/0001_sqlite_only.sql":   {Data: []byte(`this is not read`)},
}

// TestOpenConcurrently: replicas starting together apply each migration
// once (the advisory lock), into their own schema.
func TestOpenConcurrently(t *testing.T) {
	url := pgtest.New(t)
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	dbs := make([]*DB, n)
	for i := range n {
		wg.Go(func() { dbs[i], errs[i] = Open(context.Background(), url, "svc", testMigrations) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Open %d: %v", i, errs[i])
			continue
		}
		defer dbs[i].Close()
	}
	if t.Failed() {
		return
	}
	rows, err := dbs[0].Query(context.Background(), `SELECT version, name FROM svc.schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var v int
		var name string
		err := r.Scan(&v, &name)
		return fmt.Sprint(v, " ", name), err
	})
	want := []string{"1 0001_init.sql", "2 0002_more.sql"}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("applied migrations = %v, %v; want %v", got, err, want)
	}
	if _, err := dbs[0].Exec(context.Background(), `INSERT INTO t (id) VALUES (1)`); err != nil {
		t.Errorf("the schema is not the connections' search_path: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	url := pgtest.New(t)
	tests := []struct {
		name, url, schema string
		fs                fstest.MapFS
	}{
		{"bad schema name", url, "Robert'); DROP", testMigrations},
		{"no migrations", url, "svc", fstest.MapFS{}},
		{"bad migration name", url, "svc", fstest.MapFS{"migrations/postgres/init.sql": {Data: []byte(`SELECT 1`)}}},
		{"bad SQL", url, "svc2", fstest.MapFS{"migrations/postgres/0001_x.sql": {Data: []byte(`CREATE TABLE (`)}}},
		{"bad URL", "postgres://%zz", "svc", testMigrations},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if db, err := Open(context.Background(), tt.url, tt.schema, tt.fs); err == nil {
				db.Close()
				t.Errorf("Open = nil error, want one")
			}
		})
	}
}

// TestInTxRetriesLostConnection: a transaction whose connection is
// terminated mid-way runs again on a new one and commits once.
func TestInTxRetriesLostConnection(t *testing.T) {
	db, err := Open(context.Background(), pgtest.New(t), "svc", testMigrations)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs := 0
	err = db.InTx(context.Background(), func(tx pgx.Tx) error {
		runs++
		if _, err := tx.Exec(context.Background(), `INSERT INTO t (id) VALUES (1)`); err != nil {
			return err
		}
		if runs == 1 {
			_, err := tx.Exec(context.Background(), `SELECT pg_terminate_backend(pg_backend_pid())`)
			return err
		}
		return nil
	})
	var n int
	if qerr := db.QueryRow(context.Background(), `SELECT count(*) FROM t`).Scan(&n); err != nil || qerr != nil || runs != 2 || n != 1 {
		t.Errorf("InTx = %v after %d runs, %d rows (%v); want success after 2 runs, 1 row", err, runs, n, qerr)
	}
}

func TestRetryable(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code}) }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"serialization failure", pg("40001"), true},
		{"deadlock", pg("40P01"), true},
		{"terminated backend", pg("57P01"), true},
		{"connection failure", pg("08006"), true},
		{"unique violation", pg("23505"), false},
		{"check violation", pg("23514"), false},
		{"unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"deadline", context.DeadlineExceeded, false},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), false},
		{"a business error", errors.New("insufficient stock"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Retryable(tt.err); got != tt.want {
				t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestIsURL(t *testing.T) {
	for in, want := range map[string]bool{
		"postgres://h/db": true, "postgresql://u@h:5432/db?sslmode=disable": true,
		"var/order.db": false, ":memory:": false, "Postgres://h/db": false, "": false,
	} {
		if got := IsURL(in); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestCheckLocation(t *testing.T) {
	tests := []struct {
		name, db string
		wantErr  string // substring; "" means valid
	}{
		{"sqlite path", "var/order.db", ""},
		{"absolute sqlite path", "/var/lib/portico/order.db", ""},
		{"sqlite in memory", ":memory:", ""},
		{"postgres", "postgres://u@h:5432/db?sslmode=disable", ""},
		{"postgresql", "postgresql://h/db", ""},
		{"empty", "", "empty; want an SQLite file path or a postgres://"},
		{"blank", "  ", "empty"},
		{"mysql", "mysql://root@127.0.0.1/x", `a mysql:// URL is not supported; want an SQLite file path or a postgres://`},
		{"scheme in upper case", "Postgres://h/db", `a Postgres:// URL is not supported`},
		{"not a scheme keeps the value out", "u:s3cret@h://x", `a ?:// URL is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckLocation(tt.db)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("CheckLocation(%q) = %v, want nil", tt.db, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("CheckLocation(%q) = %v, want an error with %q", tt.db, err, tt.wantErr)
			case err != nil && strings.Contains(err.Error(), "s3cret"):
				t.Errorf("CheckLocation(%q) = %v, repeats the password", tt.db, err)
			}
		})
	}
}

// TestPoolSize: a pool holds DefaultMaxConns connections at most unless the
// URL says otherwise.
func TestPoolSize(t *testing.T) {
	url := pgtest.New(t)
	for _, tt := range []struct {
		suffix string
		want   int32
	}{
		{"", DefaultMaxConns},
		{"pool_max_conns=3", 3},
	} {
		u := url
		if tt.suffix != "" {
			u += map[bool]string{true: "&", false: "?"}[strings.Contains(url, "?")] + tt.suffix
		}
		db, err := Open(context.Background(), u, "svc", testMigrations)
		if err != nil {
			t.Fatal(err)
		}
		if got := db.Config().MaxConns; got != tt.want {
			t.Errorf("URL with %q: MaxConns %d, want %d", tt.suffix, got, tt.want)
		}
		db.Close()
	}
}
