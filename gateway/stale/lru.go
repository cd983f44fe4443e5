package stale

import (
	"container/list"
	"sync"
)

// LRU keeps copies in memory up to a ceiling in bytes, counting each
// copy's key, body and Content-Type plus a fixed overhead. A Put past the
// ceiling evicts the least recently used copies until the new one fits;
// a copy larger than a quarter of the ceiling is not kept (one answer
// must not empty the cache).
type LRU struct {
	mu        sync.Mutex
	max       int64
	bytes     int64
	evictions uint64
	order     *list.List // front: most recently used; values are *entry
	byKey     map[Key]*list.Element
}

type entry struct {
	key Key
	c   Copy
}

// NewLRU returns an empty LRU holding at most max bytes; max <= 0 keeps
// nothing.
func NewLRU(max int64) *LRU {
	return &LRU{max: max, order: list.New(), byKey: map[Key]*list.Element{}}
}

func size(c Copy) int64 { return int64(len(Key{})) + c.Size() }

// Put keeps c under k, replacing any copy there, and reports whether it
// was kept.
func (l *LRU) Put(k Key, c Copy) bool {
	n := size(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byKey[k]; ok {
		l.remove(e)
	}
	if n > l.max/4 {
		return false
	}
	for l.bytes+n > l.max {
		l.remove(l.order.Back())
		l.evictions++
	}
	l.byKey[k] = l.order.PushFront(&entry{key: k, c: c})
	l.bytes += n
	return true
}

// Get returns the copy under k and marks it recently used.
func (l *LRU) Get(k Key) (Copy, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.byKey[k]
	if !ok {
		return Copy{}, false
	}
	l.order.MoveToFront(e)
	return e.Value.(*entry).c, true
}

// SetMax changes the ceiling, evicting down to it at once.
func (l *LRU) SetMax(max int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max = max
	for l.bytes > l.max && l.order.Len() > 0 {
		l.remove(l.order.Back())
		l.evictions++
	}
}

func (l *LRU) remove(e *list.Element) {
	en := l.order.Remove(e).(*entry)
	delete(l.byKey, en.key)
	l.bytes -= size(en.c)
}

// Stats is an LRU's state, for metrics and tests.
type Stats struct {
	Bytes, Max int64  // held and allowed
	Copies     int    // kept
	Evictions  uint64 // copies dropped to make room, since NewLRU
}

// Stats returns the LRU's current state.
func (l *LRU) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{Bytes: l.bytes, Max: l.max, Copies: l.order.Len(), Evictions: l.evictions}
}
