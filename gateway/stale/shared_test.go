package stale

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func redisClient(t *testing.T) *redis.Client {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		t.Skip("REDIS_URL is not set: skipping the shared-copy test against Redis")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSharedRoundTrip: a copy one replica offers is what another reads.
func TestSharedRoundTrip(t *testing.T) {
	c := redisClient(t)
	prefix := "portico:test:stale:" + t.Name() + time.Now().Format(time.RFC3339Nano) + ":"
	a, b := NewShared(c, prefix, time.Second), NewShared(c, prefix, time.Second)
	defer a.Close()
	defer b.Close()
	k := NewKey("route", "/api/inventory/A")
	want := copyOf(10)
	a.Offer(k, want, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	got, ok, err := b.Get(context.Background(), k)
	if err != nil || !ok {
		t.Fatalf("Get() after a's Flush = %v, %v; want the offered copy", ok, err)
	}
	if string(got.Body) != string(want.Body) || !got.Stored.Equal(want.Stored) {
		t.Fatalf("Get() = %+v, want %+v", got, want)
	}
	if _, ok, err := b.Get(context.Background(), NewKey("never")); ok || err != nil {
		t.Errorf("Get(never stored) = %v, %v; want a miss", ok, err)
	}
}

// TestSharedDown: with nothing listening, Get fails within the timeout,
// then skips Redis; Offer never blocks.
func TestSharedDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	s := NewShared(c, "", 0)
	defer s.Close()
	for range 2 * queueSize {
		s.Offer(NewKey("k"), copyOf(1), time.Minute)
	}
	start := time.Now()
	if _, ok, err := s.Get(context.Background(), NewKey("k")); ok || err == nil {
		t.Fatalf("Get() = %v, %v; want an error", ok, err)
	}
	if _, _, err := s.Get(context.Background(), NewKey("k")); err == nil {
		t.Fatal("second Get() = nil error, want Redis skipped")
	}
	t.Logf("two Gets against a dead Redis took %v", time.Since(start))
}

// TestSharedFlushAfterClose: Flush on a closed Shared returns at once.
func TestSharedFlushAfterClose(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	s := NewShared(c, "", time.Second)
	s.Close()
	if err := s.Flush(context.Background()); err == nil {
		t.Fatal("Flush after Close = nil, want an error")
	}
}
