package nonce

import (
	"context"
	"time"
)

// Store is what Handover needs of a nonce store (auth.NonceStore).
type Store interface {
	Claim(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// TokenStore is a Store that can claim with a token: a key that already
// holds the same token counts as fresh. Handover claims with one token in
// every store, so two stores that are one server under two names (two
// spellings of one redis.url) do not see each other's claim as a replay.
type TokenStore interface {
	ClaimToken(ctx context.Context, key, token string, ttl time.Duration) (bool, error)
}

// Previous is a store Handover still asks until Until.
type Previous struct {
	Store Store
	Until time.Time
}

// Handover moves nonces from earlier stores to Next without forgetting
// any: a nonce is fresh only if Next and every Previous whose Until has
// not passed have not seen it (it is claimed in each, with one token), so
// a nonce claimed in an earlier store before the move still counts as
// replayed, and an edge not yet moved that claims in the earlier store
// collides with this one. Until is at least the longest nonce ttl after
// the move. Any store failing fails the claim (closed), as one store does.
type Handover struct {
	Next Store
	// Prev is ordered oldest first: Prev[0] has the earliest Until.
	Prev []Previous
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Claim implements the nonce store.
func (h *Handover) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	token := newToken()
	fresh, err := claim(ctx, h.Next, key, token, ttl)
	if err != nil {
		return false, err
	}
	now := h.now()
	for _, p := range h.Prev {
		if now.After(p.Until) {
			continue
		}
		prevFresh, err := claim(ctx, p.Store, key, token, ttl)
		if err != nil {
			return false, err
		}
		fresh = fresh && prevFresh
	}
	return fresh, nil
}

func claim(ctx context.Context, s Store, key, token string, ttl time.Duration) (bool, error) {
	if ts, ok := s.(TokenStore); ok {
		return ts.ClaimToken(ctx, key, token, ttl)
	}
	return s.Claim(ctx, key, ttl)
}

// RemembersSince is the instant from which the handover remembers every
// claim (auth.NonceHorizon): the oldest store still asked holds the claims
// from before every later move, so its horizon; once every Until has
// passed, Next's. The zero time means no horizon (a store that is not
// one, such as Redis).
func (h *Handover) RemembersSince() time.Time {
	now := h.now()
	for _, p := range h.Prev {
		if !now.After(p.Until) {
			return horizon(p.Store)
		}
	}
	return horizon(h.Next)
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
