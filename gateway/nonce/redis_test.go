package nonce

import (
	"context"
	"errors"
	"testing"
	"time"

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
