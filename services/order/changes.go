package order

import "sync"

// changes tells WatchOrder calls on this process that an order changed. It
// holds one channel per watched order id, closed (and forgotten) on the
// next change, so a notification never blocks the writer and costs no
// memory for orders nobody watches: its size is bounded by the watches
// open. Changes made by another process (a replica on the same PostgreSQL
// database) are not seen here; WatchOrder polls the store for those
// (WithWatchPoll). Safe for concurrent use.
type changes struct {
	mu    sync.Mutex
	waits map[string]*waiting
}

type waiting struct {
	ch   chan struct{}
	refs int
}

func newChanges() *changes { return &changes{waits: map[string]*waiting{}} }

// wait returns a channel closed at the next change of id, and the func
// that gives it up; call it when done waiting, closed or not.
func (c *changes) wait(id string) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.waits[id]
	if w == nil {
		w = &waiting{ch: make(chan struct{})}
		c.waits[id] = w
	}
	w.refs++
	return w.ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if w.refs--; w.refs == 0 && c.waits[id] == w {
			delete(c.waits, id)
		}
	}
}

// notify wakes every wait on id.
func (c *changes) notify(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.waits[id]; w != nil {
		close(w.ch)
		delete(c.waits, id)
	}
}

// watched is how many order ids have a wait (for tests).
func (c *changes) watched() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waits)
}
