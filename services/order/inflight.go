package order

import "sync"

// inflight tracks which orders a saga run in this process is driving right
// now. It is the lease that keeps the reconciler off an order CreateOrder is
// still running, and the notification a concurrent replay waits on instead
// of polling the store.
type inflight struct {
	mu   sync.Mutex
	runs map[string]chan struct{}
}

func newInflight() *inflight { return &inflight{runs: make(map[string]chan struct{})} }

// acquire marks id as driven by the caller; false when it already is.
func (f *inflight) acquire(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.runs[id]; ok {
		return false
	}
	f.runs[id] = make(chan struct{})
	return true
}

// release ends the caller's run of id and wakes every waiter.
func (f *inflight) release(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ch, ok := f.runs[id]; ok {
		close(ch)
		delete(f.runs, id)
	}
}

// watch returns a channel closed when the current run of id ends; ok is
// false when no run of id is in progress.
func (f *inflight) watch(id string) (done <-chan struct{}, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.runs[id]
	return ch, ok
}
