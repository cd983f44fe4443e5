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
			h := &Handover{Next: &memStore{seen: map[string]bool{}}, Prev: prev, Until: t0.Add(time.Minute),
				Now: func() time.Time { return tc.at }}
			fresh, err := h.Claim(context.Background(), tc.key, time.Minute)
			if fresh != tc.wantFresh || (err != nil) != tc.wantErr {
				t.Errorf("Claim = %v, %v; want %v, error %v", fresh, err, tc.wantFresh, tc.wantErr)
			}
		})
	}
}

func TestCurrent(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	a, b, c := &memStore{}, &memStore{}, &memStore{}
	inner := &Handover{Next: b, Prev: a, Until: t0}
	outer := &Handover{Next: c, Prev: inner, Until: t0.Add(time.Hour)}
	if got := Current(outer, t0.Add(time.Minute)); got != outer {
		t.Errorf("within the outer handover: got %v, want the outer", got)
	}
	if got := Current(outer, t0.Add(2*time.Hour)); got != Store(c) {
		t.Errorf("after both: got %v, want the newest store", got)
	}
	if got := Current(a, t0); got != Store(a) {
		t.Error("a plain store is its own current")
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
			h := &Handover{Next: tc.next, Prev: tc.prev, Until: t0.Add(time.Minute), Now: func() time.Time { return tc.at }}
			if got := h.RemembersSince(); !got.Equal(tc.want) {
				t.Errorf("RemembersSince() = %v, want %v", got, tc.want)
			}
		})
	}
}
