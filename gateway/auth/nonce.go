package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"time"
)

// NonceStore remembers the nonces of signed requests, so each is accepted
// once. Claim records key for ttl and reports true when key was free; a
// false means a replay. It must be atomic: of two concurrent claims of
// one key exactly one succeeds. An error fails the request closed (503).
// MemoryNonces keeps them in one process; a store shared through Redis
// serves several edges.
type NonceStore interface {
	Claim(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// NonceHorizon is implemented by a NonceStore that remembers claims only
// from some instant on: a store in memory forgets every nonce when its
// process ends, so a request signed before a restarted edge began
// remembering could have been claimed in the store that is gone.
// SignedApps refuses such a request (ErrClockSkew) instead of letting a
// captured request be replayed after a restart. The zero time means the
// store remembers everything it was ever told (a store in Redis).
type NonceHorizon interface {
	RemembersSince() time.Time
}

// DefaultMaxNonces bounds a MemoryNonces.
const DefaultMaxNonces = 1 << 20

// ErrNonceStoreFull: MemoryNonces holds MaxNonces live nonces.
var ErrNonceStoreFull = errors.New("auth: nonce store full")

// MemoryNonces is an in-memory NonceStore for one edge process: a map of
// keys (held as their SHA-256, 32 bytes however long the app id and nonce
// are) to expiry times behind one mutex, swept of expired keys when it
// fills, and not again before the earliest entry left expires (so a full
// store of live nonces refuses a claim in constant time instead of
// scanning the map each time). When every entry is live and the store is
// full, Claim fails (the request is refused, never let through
// unchecked). Safe for concurrent use.
type MemoryNonces struct {
	// Max bounds the live nonces; zero means DefaultMaxNonces.
	Max int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Since is when the store began remembering (its process started):
	// SignedApps refuses requests signed before it (NonceHorizon), as
	// the nonces of those may have been claimed in a store now gone. Zero
	// means no such refusal (a store that outlives no restart of interest).
	Since time.Time

	mu      sync.Mutex
	expires map[[sha256.Size]byte]time.Time // by the key's SHA-256: fixed size, whatever the client sent
	// sweepAt: no entry expires before it (zero: unknown), so a sweep
	// before it would free nothing.
	sweepAt time.Time
}

var (
	_ NonceStore   = (*MemoryNonces)(nil)
	_ NonceHorizon = (*MemoryNonces)(nil)
)

// RemembersSince implements NonceHorizon: Since.
func (m *MemoryNonces) RemembersSince() time.Time { return m.Since }

// Claim implements NonceStore.
func (m *MemoryNonces) Claim(_ context.Context, key string, ttl time.Duration) (bool, error) {
	now := time.Now()
	if m.Now != nil {
		now = m.Now()
	}
	max := m.Max
	if max <= 0 {
		max = DefaultMaxNonces
	}
	id := sha256.Sum256([]byte(key))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.expires == nil {
		m.expires = map[[sha256.Size]byte]time.Time{}
	}
	if exp, ok := m.expires[id]; ok && now.Before(exp) {
		return false, nil
	}
	if len(m.expires) >= max && !now.Before(m.sweepAt) {
		m.sweep(now)
	}
	if len(m.expires) >= max {
		return false, ErrNonceStoreFull
	}
	exp := now.Add(ttl)
	m.expires[id] = exp
	if exp.Before(m.sweepAt) {
		m.sweepAt = exp
	}
	return true, nil
}

// sweep deletes the expired entries and notes when the next one expires.
func (m *MemoryNonces) sweep(now time.Time) {
	m.sweepAt = time.Time{}
	for k, exp := range m.expires {
		switch {
		case !now.Before(exp):
			delete(m.expires, k)
		case m.sweepAt.IsZero() || exp.Before(m.sweepAt):
			m.sweepAt = exp
		}
	}
}

// Len returns how many nonces are held, expired ones included.
func (m *MemoryNonces) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.expires)
}
