package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// checkPath refuses a database path whose directory is missing (a typo
// would otherwise become a new, empty database in a new tree) and a file
// this process cannot open for writing, or cannot create, with the cause
// (permission denied, read-only file system) and the path; SQLite would
// say only "unable to open database file (14)", or open the file
// read-only without a word.
func checkPath(path string) error {
	dir := filepath.Dir(path)
	switch st, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sqlitedb: %s: the directory %s does not exist; create it first (no directory is created for a database)", path, dir)
	case err != nil:
		return fmt.Errorf("sqlitedb: %s: %w", path, err)
	case !st.IsDir():
		return fmt.Errorf("sqlitedb: %s: %s is not a directory", path, dir)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said once, below
		}
		if errors.Is(err, fs.ErrPermission) { // EACCES, or EPERM (an immutable file)
			return fmt.Errorf("%w: %s: permission denied (%v)", ErrNotWritable, path, err)
		}
		return fmt.Errorf("%w: %s: %v", ErrNotWritable, path, err)
	}
	return f.Close()
}

// proveWrite runs one write transaction (BEGIN IMMEDIATE takes the write
// lock) and rolls it back: a database SQLite opened read-only fails it.
func proveWrite(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS write_probe (x INTEGER); DROP TABLE write_probe`)
	return err
}

// writable reports ErrNotWritable when this process may no longer write
// the file at path.
func writable(path string) error {
	if err := unix.Access(path, unix.W_OK); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotWritable, path, err)
	}
	return nil
}
