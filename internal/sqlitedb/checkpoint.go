package sqlitedb

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// CheckpointInterval is how often a file database's background
// checkpointer copies the WAL into the database file.
const CheckpointInterval = 100 * time.Millisecond

// inlineCheckpointPages is the writer's own automatic checkpoint threshold
// (SQLite's default is 1000 pages): only a backstop, should the background
// checkpointer fall behind, so that the WAL stays bounded (about 40 MiB of
// 4 KiB pages).
const inlineCheckpointPages = 10000

// checkpointer runs PASSIVE checkpoints on a connection of its own. SQLite
// otherwise checkpoints inside the commit that crosses the threshold,
// syncing the WAL and the database file while the one writer, and every
// writer queued behind it, waits; a PASSIVE checkpoint never blocks a
// writer or a reader.
type checkpointer struct {
	db    *sql.DB
	stop  chan struct{}
	done  chan struct{}
	close sync.Once
	// observe, if set, is told each checkpoint's WAL frames and the frames
	// copied (tests).
	observe func(frames, copied int)
}

// checkpointObserver is copied into each new checkpointer (tests).
var checkpointObserver func(frames, copied int)

func startCheckpointer(db *sql.DB, every time.Duration) *checkpointer {
	c := &checkpointer{db: db, stop: make(chan struct{}), done: make(chan struct{}), observe: checkpointObserver}
	go c.loop(every)
	return c
}

func (c *checkpointer) loop(every time.Duration) {
	defer close(c.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.checkpoint()
		}
	}
}

// checkpoint copies what it can; a failure (the database busy, a disk
// error) leaves the frames for the next tick or the writer's backstop.
func (c *checkpointer) checkpoint() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var busy, logFrames, done int
	if c.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logFrames, &done) == nil && c.observe != nil {
		c.observe(logFrames, done)
	}
}

// Close stops the checkpointer, runs a last checkpoint and closes its
// connection. Closing again does nothing.
func (c *checkpointer) Close() error {
	var err error
	c.close.Do(func() {
		close(c.stop)
		<-c.done
		c.checkpoint()
		err = c.db.Close()
	})
	return err
}
