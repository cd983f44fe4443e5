// Package redistest gives tests a Redis: the shared server named by
// REDIS_URL with a key prefix private to the test (Shared), or a private
// redis-server on a free port that the test may kill (Private).
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/portico-gateway/portico/internal/testproc"
)

// Shared returns a client of the server REDIS_URL names and a random key
// prefix for the test; it skips the test when REDIS_URL is unset. The
// test's keys are deleted in Cleanup.
func Shared(t testing.TB) (url string, client *redis.Client, prefix string) {
	t.Helper()
	url = os.Getenv("REDIS_URL")
	if url == "" {
		t.Skip("REDIS_URL is unset: set it (e.g. redis://127.0.0.1:6379/0) to run the tests against a real Redis")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	client = redis.NewClient(opt)
	prefix = "portico-test:" + Random() + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		iter := client.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
		client.Close()
	})
	return url, client, prefix
}

// Server is a private redis-server.
type Server struct {
	URL  string
	proc *testproc.Proc
}

// Private starts redis-server on a free loopback port, without
// persistence, and waits until it answers; it skips the test when
// REDIS_URL is unset (Redis tests run where Redis does) or redis-server is
// not installed. The server is stopped in Cleanup.
func Private(t testing.TB) *Server {
	t.Helper()
	if os.Getenv("REDIS_URL") == "" {
		t.Skip("REDIS_URL is unset: Redis tests are skipped")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	port := testproc.FreePort(t)
	p := testproc.Start(t, bin, "redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no")
	s := &Server{URL: "redis://" + testproc.Addr(port) + "/0", proc: p}
	c := s.Client(t)
	ok := testproc.WaitFor(context.Background(), 10*time.Second, func(ctx context.Context) bool {
		return c.Ping(ctx).Err() == nil
	})
	if !ok {
		t.Fatalf("private redis-server on port %d did not answer PING", port)
	}
	return s
}

// Client returns a new client of s, closed in Cleanup.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// Kill stops the server with SIGKILL: an outage.
func (s *Server) Kill() { s.proc.Kill() }

// Random returns 16 random hex characters.
func Random() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
