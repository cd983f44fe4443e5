package nonce

import (
	"context"
	"errors"
	"testing"
	"time"
)

// memStore is a Store in a map, failing when err is set.
type memStore struct {
	seen map[string]bool
	err  error
}

func (m *memStore) Claim(_ context.Context, key string, _ time.Duration) (bool, error) {
	if m.err != nil {
		return false, m.err
	}
	if m.seen[key] {
		return false, nil
	}
	m.seen[key] = true
	return true, nil
}

func TestHandover(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	down := errors.New("down")
	tests := []struct {
		name      string
		prevSeen  string
		prevErr   error
		at        time.Time
		key       string
		wantFresh bool
		wantErr   bool
	}{
		{"fresh in both", "", nil, t0, "k", true, false},
		{"seen by the previous store", "k", nil, t0, "k", false, false},
		{"previous store down: closed", "", down, t0, "k", false, true},
		{"after Until the previous is not asked", "k", down, t0.Add(time.Hour), "k", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prev := &memStore{seen: map[string]bool{tc.prevSeen: tc.prevSeen != ""}, err: tc.prevErr}
			h := &Handover{Next: &memStore{seen: map[string]bool{}}, Prev: []Previous{{prev, t0.Add(time.Minute)}},
				Now: func() time.Time { return tc.at }}
			fresh, err := h.Claim(context.Background(), tc.key, time.Minute)
			if fresh != tc.wantFresh || (err != nil) != tc.wantErr {
				t.Errorf("Claim = %v, %v; want %v, error %v", fresh, err, tc.wantFresh, tc.wantErr)
			}
		})
	}
}

// tokenStore is a memStore that claims with a token: a key holding the
// same token is fresh (one Redis reached under two names).
type tokenStore struct{ owner map[string]string }

func (m *tokenStore) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	return m.ClaimToken(ctx, key, "", ttl)
}

func (m *tokenStore) ClaimToken(_ context.Context, key, token string, _ time.Duration) (bool, error) {
	if tok, ok := m.owner[key]; ok {
		return token != "" && tok == token, nil
	}
	m.owner[key] = token
	return true, nil
}

// TestHandoverOneStoreTwice: a store that is both Next and a Previous
// (one server under two names) sees one claim, not a replay; a second
// claim of the key is a replay; an expired Previous is not asked.
func TestHandoverOneStoreTwice(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	one := &tokenStore{owner: map[string]string{}}
	other := &tokenStore{owner: map[string]string{}}
	h := &Handover{Next: one, Prev: []Previous{{other, t0.Add(-time.Second)}, {one, t0.Add(time.Minute)}},
		Now: func() time.Time { return t0 }}
	for i, want := range []bool{true, false} {
		if fresh, err := h.Claim(context.Background(), "k", time.Minute); fresh != want || err != nil {
			t.Errorf("claim %d = %v, %v; want %v", i+1, fresh, err, want)
		}
	}
	if len(other.owner) != 0 {
		t.Errorf("the expired store was asked: %v", other.owner)
	}
}

// sinceStore is a store that remembers claims from since on.
type sinceStore struct {
	memStore
	since time.Time
}

func (s *sinceStore) RemembersSince() time.Time { return s.since }

// TestHandoverRemembersSince: during the move the horizon is the previous
// store's (it holds the claims made before), after Until the next one's;
// a store without one (Redis) has none.
func TestHandoverRemembersSince(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	started, moved := t0.Add(-time.Hour), t0
	mem := func(at time.Time) Store { return &sinceStore{memStore{seen: map[string]bool{}}, at} }
	redis := &memStore{seen: map[string]bool{}}
	tests := []struct {
		name       string
		next, prev Store
		at         time.Time
		want       time.Time
	}{
		{"memory to Redis, during the move", redis, mem(started), t0, started},
		{"memory to Redis, after Until", redis, mem(started), t0.Add(time.Hour), time.Time{}},
		{"Redis to memory, during the move", mem(moved), redis, t0, time.Time{}},
		{"Redis to memory, after Until", mem(moved), redis, t0.Add(time.Hour), moved},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handover{Next: tc.next, Prev: []Previous{{tc.prev, t0.Add(time.Minute)}}, Now: func() time.Time { return tc.at }}
			if got := h.RemembersSince(); !got.Equal(tc.want) {
				t.Errorf("RemembersSince() = %v, want %v", got, tc.want)
			}
		})
	}
}
