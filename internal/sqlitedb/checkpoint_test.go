package sqlitedb

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestBackgroundCheckpoint: commits leave the WAL to the checkpointer,
// which copies every frame into the database file.
func TestBackgroundCheckpoint(t *testing.T) {
	ctx := context.Background()
	complete := make(chan struct{}, 1)
	var armed atomic.Bool // set once every insert has committed
	checkpointObserver = func(frames, copied int) {
		if armed.Load() && frames > 0 && frames == copied {
			select {
			case complete <- struct{}{}:
			default:
			}
		}
	}
	t.Cleanup(func() { checkpointObserver = nil })
	db, err := Open(ctx, filepath.Join(t.TempDir(), "kv.db"), kvSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var autockpt int
	if err := db.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&autockpt); err != nil || autockpt != inlineCheckpointPages {
		t.Errorf("writer's wal_autocheckpoint = %d, %v; want %d", autockpt, err, inlineCheckpointPages)
	}
	for i := range 200 {
		if _, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, 'x')`, i); err != nil {
			t.Fatal(err)
		}
	}
	armed.Store(true)
	select { // the event: a checkpoint that found frames and copied them all
	case <-complete:
	case <-time.After(20 * time.Second):
		t.Fatal("no complete checkpoint in 20s")
	}
	var n int
	if err := db.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM kv`).Scan(&n); err != nil || n != 200 {
		t.Errorf("rows = %d, %v; want 200", n, err)
	}
}
