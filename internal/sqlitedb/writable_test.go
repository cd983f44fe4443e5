//go:build linux

package sqlitedb

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"golang.org/x/sys/unix"
)

// fsImmutable is FS_IMMUTABLE_FL (linux/fs.h): not even root may write.
const fsImmutable = 0x10

var oneTable = fstest.MapFS{"migrations/0001_create.sql": {Data: []byte(`CREATE TABLE t (a INTEGER);`)}}

// readOnly makes the file at path unwritable to this process: mode 0444,
// and for root (whom the mode does not stop) the immutable attribute,
// removed at the end of the test. It skips the test when the file can
// still be opened for writing (a file system without the attribute).
func readOnly(t *testing.T, path string) {
	t.Helper()
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
		if err == nil {
			err = unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags|fsImmutable))
		}
		if err == nil {
			t.Cleanup(func() {
				if f, err := os.Open(path); err == nil {
					_ = unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags))
					f.Close()
				}
			})
		}
	}
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		f.Close()
		t.Skip("cannot make a file unwritable here (root on a file system without the immutable attribute)")
	}
}

// TestOpenRefusesReadOnlyFile: a database file this process cannot write
// is refused at Open, saying so, where SQLite silently opened it read-only
// (the service then reported ready and failed every write with 500).
func TestOpenRefusesReadOnlyFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(ctx, path, oneTable)
	if err != nil {
		t.Fatalf("Open() = %v", err)
	}
	db.Close()
	readOnly(t, path)
	db, err = Open(ctx, path, oneTable)
	if err == nil {
		db.Close()
		t.Fatalf("Open(read-only file) = nil error, want a refusal")
	}
	if !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), path) {
		t.Errorf("Open(read-only file) = %v, want ErrNotWritable naming %s", err, path)
	}
}

// TestOpenPathErrors: a path in a missing directory is refused (it was
// created, tree and all, so a typo made a new empty database), and a path
// this process may not create says permission denied and the path (it said
// only "unable to open database file (14)").
func TestOpenPathErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	readOnly(t, locked)
	tests := []struct {
		name string
		path string
		want []string
	}{
		{"missing directory", filepath.Join(dir, "typo", "sub", "x.db"), []string{"does not exist", filepath.Join(dir, "typo", "sub")}},
		{"directory not writable", filepath.Join(locked, "x.db"), []string{"permission denied", filepath.Join(locked, "x.db")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(ctx, tt.path, oneTable)
			if err == nil {
				db.Close()
				t.Fatalf("Open(%s) = nil error, want a refusal", tt.path)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Open(%s) = %q, want it to say %q", tt.path, err, w)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "typo")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open made the missing directory (stat: %v); want nothing created", err)
	}
}

// TestPingSaysNotWritable: the readiness probe (Ping) fails with
// ErrNotWritable once the file can no longer be written; it answered as
// long as the database could be read, so the service stayed ready while
// every write failed.
func TestPingSaysNotWritable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(ctx, path, oneTable)
	if err != nil {
		t.Fatalf("Open() = %v", err)
	}
	defer db.Close()
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping() = %v, want nil", err)
	}
	readOnly(t, path)
	if err := db.Ping(ctx); !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), path) {
		t.Errorf("Ping(read-only file) = %v, want ErrNotWritable naming %s", err, path)
	}
}
