package nonce

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/portico-gateway/portico/internal/redistest"
)

func TestRedisClaim(t *testing.T) {
	_, c, prefix := redistest.Shared(t)
	a, err := NewRedis(c, prefix, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewRedis(c, prefix, time.Second) // a second edge
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		s     *Redis
		key   string
		fresh bool
	}{
		{"first claim", a, "app-1:n-1", true},
		{"replay on the same edge", a, "app-1:n-1", false},
		{"replay on another edge", b, "app-1:n-1", false},
		{"another nonce", b, "app-1:n-2", true},
		{"same nonce, another app", a, "app-2:n-1", true},
	} {
		fresh, err := tt.s.Claim(ctx, tt.key, time.Minute)
		if err != nil || fresh != tt.fresh {
			t.Errorf("%s: Claim(%s) = %v, %v; want %v", tt.name, tt.key, fresh, err, tt.fresh)
		}
	}
	if ttl := c.PTTL(ctx, prefix+"app-1:n-1").Val(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("the nonce's TTL is %s, want within a minute", ttl)
	}
}

// TestRedisFailsClosed: with Redis killed, Claim never reports a nonce
// fresh; it returns ErrUnavailable within its timeout.
func TestRedisFailsClosed(t *testing.T) {
	srv := redistest.Private(t)
	s, err := NewRedis(srv.Client(t), "n:", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if fresh, err := s.Claim(context.Background(), "k", time.Minute); !fresh || err != nil {
		t.Fatalf("before the outage: %v, %v", fresh, err)
	}
	srv.Kill()
	for range 3 {
		fresh, err := s.Claim(context.Background(), "k2", time.Minute)
		if fresh || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Redis down: Claim = %v, %v; want false, ErrUnavailable", fresh, err)
		}
	}
}

func TestNewRedisRejects(t *testing.T) {
	if _, err := NewRedis(nil, "", 0); err == nil {
		t.Error("NewRedis(nil) = nil error")
	}
	_, c, _ := redistest.Shared(t)
	if _, err := NewRedis(c, "", -time.Second); err == nil {
		t.Error("NewRedis with a negative timeout = nil error")
	}
	s, _ := NewRedis(c, "", 0)
	if _, err := s.Claim(context.Background(), "k", 0); err == nil {
		t.Error("Claim with a zero ttl = nil error")
	}
}

// TestRedisDataLoss: once Redis loses its data (FLUSHALL on a private
// server), no claim is fresh until one ttl has passed since the loss: a
// replay of a nonce claimed before is refused with ErrDataLost (not taken
// for fresh), on the edge that saw the loss, on another edge that knew
// the store, and on a new edge; the refusal says when to retry. A
// store's first answer on a server never used is trusted at once, and
// once the hold has passed claims are decided again.
func TestRedisDataLoss(t *testing.T) {
	srv := redistest.Private(t)
	c := srv.Client(t)
	ctx := context.Background()
	const ttl = time.Minute
	edge := func() *Redis {
		s, err := NewRedis(c, "n:", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := edge(), edge()
	for _, claim := range []struct {
		s   *Redis
		key string
	}{{a, "app\x00k1"}, {b, "app\x00k2"}} {
		if fresh, err := claim.s.Claim(ctx, claim.key, ttl); !fresh || err != nil {
			t.Fatalf("a new store: Claim(%q) = %v, %v; want fresh", claim.key, fresh, err)
		}
	}
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		s    *Redis
		key  string
	}{
		{"replay on the edge that claimed it", a, "app\x00k1"},
		{"replay on another edge", b, "app\x00k1"},
		{"a fresh nonce on another edge", b, "app\x00k3"},
		{"a replay on a new edge", edge(), "app\x00k2"},
	}
	for _, tc := range tests {
		fresh, err := tc.s.Claim(ctx, tc.key, ttl)
		var ue *UnavailableError
		if fresh || !errors.Is(err, ErrDataLost) || !errors.Is(err, ErrUnavailable) || !errors.As(err, &ue) {
			t.Errorf("%s: Claim = %v, %v; want refused with ErrDataLost", tc.name, fresh, err)
			continue
		}
		if ue.RetryAfter <= 0 || ue.RetryAfter > ttl {
			t.Errorf("%s: RetryAfter = %s, want within (0, %s]", tc.name, ue.RetryAfter, ttl)
		}
	}
	// The hold is over (as one ttl later): claims are decided again.
	if err := c.HSet(ctx, "n:epoch", "from", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		if fresh, err := a.Claim(ctx, "app\x00k1", ttl); fresh != want || err != nil {
			t.Errorf("after the hold, claim %d = %v, %v; want %v", i+1, fresh, err, want)
		}
	}
}

// TestRedisDataLossSeenByANewEdgeFirst: when a new edge (knowing no
// epoch) is the first to find the marker gone, it takes the store for
// new; the first edge that knew the old epoch then holds the store from
// the marker's creation on, for every edge.
func TestRedisDataLossSeenByANewEdgeFirst(t *testing.T) {
	srv := redistest.Private(t)
	c := srv.Client(t)
	ctx := context.Background()
	old, _ := NewRedis(c, "n:", time.Second)
	if fresh, err := old.Claim(ctx, "app\x00k1", time.Minute); !fresh || err != nil {
		t.Fatalf("Claim = %v, %v", fresh, err)
	}
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	young, _ := NewRedis(c, "n:", time.Second)
	if fresh, err := young.Claim(ctx, "app\x00k2", time.Minute); !fresh || err != nil {
		t.Fatalf("the new edge's first claim = %v, %v; want fresh (it cannot know)", fresh, err)
	}
	for _, s := range []*Redis{old, young} {
		if fresh, err := s.Claim(ctx, "app\x00k1", time.Minute); fresh || !errors.Is(err, ErrDataLost) {
			t.Errorf("after the old edge saw the new epoch: Claim = %v, %v; want ErrDataLost", fresh, err)
		}
	}
}

// slowHook makes Redis slow for a claim's attempts: each attempt listed in
// slow (1-based) waits until its deadline, before or after Redis ran it
// (the reply lost); attempts counts every attempt.
type slowHook struct {
	slow     map[int]bool
	after    bool
	attempts atomic.Int32
}

func (h *slowHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *slowHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *slowHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		n := int(h.attempts.Add(1))
		if !h.slow[n] {
			return next(ctx, cmd)
		}
		if h.after {
			_ = next(ctx, cmd) // Redis claims; the reply is lost
		}
		<-ctx.Done()
		cmd.SetErr(ctx.Err())
		return ctx.Err()
	}
}

// TestRedisClaimRetries: a claim whose first attempt gets no answer in
// time is asked once more: fresh when the retry answers, also when the
// first attempt's claim reached Redis and only its reply was lost (the
// retry finds its own token); with no answer twice it fails closed saying
// why; a caller's context that ended is not retried.
func TestRedisClaimRetries(t *testing.T) {
	srv := redistest.Private(t)
	tests := []struct {
		name     string
		slow     map[int]bool
		after    bool
		ctxDone  bool
		fresh    bool
		attempts int32
	}{
		{"first attempt times out", map[int]bool{1: true}, false, false, true, 2},
		{"first reply lost after the claim", map[int]bool{1: true}, true, false, true, 2},
		{"no answer twice", map[int]bool{1: true, 2: true}, false, false, false, 2},
		{"caller gone", map[int]bool{1: true}, false, true, false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := srv.Client(t)
			if err := claimScript.Load(context.Background(), c).Err(); err != nil { // connected, script loaded: one command per attempt
				t.Fatal(err)
			}
			h := &slowHook{slow: tc.slow, after: tc.after}
			c.AddHook(h)
			s, _ := NewRedis(c, redistest.Random()+":", 20*time.Millisecond)
			ctx := context.Background()
			if tc.ctxDone {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 20*time.Millisecond)
				defer cancel()
			}
			fresh, err := s.Claim(ctx, "app\x00k", time.Minute)
			if fresh != tc.fresh || (err != nil) == tc.fresh || h.attempts.Load() != tc.attempts {
				t.Errorf("Claim = %v, %v after %d attempts; want fresh %v after %d", fresh, err, h.attempts.Load(), tc.fresh, tc.attempts)
			}
			var ue *UnavailableError
			if err != nil && (!errors.As(err, &ue) || !strings.Contains(ue.Reason, "did not answer within 20ms (2 attempts)")) {
				t.Errorf("Claim's error %v does not say why", err)
			}
			if s.Failing() == tc.fresh {
				t.Errorf("Failing() = %v after a claim fresh %v", s.Failing(), tc.fresh)
			}
		})
	}
}
