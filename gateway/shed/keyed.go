package shed

import "sync"

// Keyed counts holders per key (a client address, a caller) and caps each
// key on its own, so that one key cannot take every slot of a Limiter.
// The cap is passed to each TryAcquire, so that a reload can change it
// while the counts carry on. A key is forgotten when its last holder
// releases it: the map holds only keys in flight. One mutex guards it, held
// for a map lookup. The zero value is ready to use; a Keyed is safe for
// concurrent use.
type Keyed struct {
	mu   sync.Mutex
	held map[string]int
}

// TryAcquire takes one of key's limit slots and reports whether it did;
// it never waits. A limit of 0 or less means no cap: the slot is taken.
func (k *Keyed) TryAcquire(key string, limit int) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := k.held[key]
	if limit > 0 && n >= limit {
		return false
	}
	if k.held == nil {
		k.held = map[string]int{}
	}
	k.held[key] = n + 1
	return true
}

// Release gives back a slot of key taken by TryAcquire.
func (k *Keyed) Release(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch n := k.held[key]; {
	case n > 1:
		k.held[key] = n - 1
	case n == 1:
		delete(k.held, key)
	}
}

// InFlight returns the slots key holds now.
func (k *Keyed) InFlight(key string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.held[key]
}

// Keys returns how many keys hold a slot now.
func (k *Keyed) Keys() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.held)
}

// Stats returns how many keys hold a slot now and the most slots one of
// them holds. It walks the keys in flight, under the mutex.
func (k *Keyed) Stats() (keys, largest int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, n := range k.held {
		largest = max(largest, n)
	}
	return len(k.held), largest
}
