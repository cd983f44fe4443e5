package sqlitedb

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"
)

func TestMigrationsApplyOnceInOrder(t *testing.T) {
	ctx := context.Background()
	fs := fstest.MapFS{
		"migrations/0002_add.sql":    {Data: []byte(`ALTER TABLE t ADD COLUMN b TEXT;`)},
		"migrations/0001_create.sql": {Data: []byte(`CREATE TABLE t (a INTEGER);`)},
	}
	path := filepath.Join(t.TempDir(), "x.db")
	for range 2 { // reopening must not re-apply
		db, err := Open(ctx, path, fs)
		if err != nil {
			t.Fatalf("Open() = %v", err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO t (a, b) VALUES (1, 'x')`); err != nil {
			t.Fatalf("insert after migrations: %v", err)
		}
		var mode string
		if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode = %q, %v; want wal", mode, err)
		}
		if err := db.Ping(ctx); err != nil {
			t.Errorf("Ping() = %v", err)
		}
		db.Close()
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		path string
		fs   fstest.MapFS
	}{
		{"empty path", "", fstest.MapFS{}},
		{"bad migration name", Memory, fstest.MapFS{"migrations/create.sql": {Data: []byte(`SELECT 1`)}}},
		{"bad SQL", Memory, fstest.MapFS{"migrations/0001_bad.sql": {Data: []byte(`CREATE TABLEX`)}}},
		{"directory cannot be made", "/proc/portico/x.db", fstest.MapFS{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if db, err := Open(ctx, tt.path, tt.fs); err == nil {
				db.Close()
				t.Error("Open() = nil error, want one")
			}
		})
	}
}
