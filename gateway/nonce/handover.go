package nonce

import (
	"context"
	"time"
)

// Store is what Handover needs of a nonce store (auth.NonceStore).
type Store interface {
	Claim(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// Handover moves nonces from one store to another without forgetting
// any: until Until, a nonce is fresh only if both Prev and Next have not
// seen it (it is claimed in both), so a nonce claimed in Prev before the
// move still counts as replayed. From Until on only Next is asked. Until
// is at least the longest nonce ttl after the move. Either store failing
// fails the claim (closed), as one store does.
type Handover struct {
	Next, Prev Store
	Until      time.Time
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Claim implements the nonce store.
func (h *Handover) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	fresh, err := h.Next.Claim(ctx, key, ttl)
	if err != nil || h.now().After(h.Until) {
		return fresh, err
	}
	prevFresh, err := h.Prev.Claim(ctx, key, ttl)
	if err != nil {
		return false, err
	}
	return fresh && prevFresh, nil
}

// RemembersSince is the instant from which the handover remembers every
// claim (auth.NonceHorizon): until Until, the previous store's (it holds
// the claims from before the move); then the next store's. The zero time
// means no horizon (a store that is not one, such as Redis).
func (h *Handover) RemembersSince() time.Time {
	if h.now().After(h.Until) {
		return horizon(h.Next)
	}
	return horizon(h.Prev)
}

// horizon returns s's RemembersSince, or the zero time when s has none.
func horizon(s Store) time.Time {
	if hz, ok := s.(interface{ RemembersSince() time.Time }); ok {
		return hz.RemembersSince()
	}
	return time.Time{}
}

func (h *Handover) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Current returns the store a Handover chain ends up with now: h's Next
// once Until has passed (so chained moves do not pile up), else h.
func Current(s Store, now time.Time) Store {
	for {
		h, ok := s.(*Handover)
		if !ok || !now.After(h.Until) {
			return s
		}
		s = h.Next
	}
}
