package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// lockedBuffer is a bytes.Buffer safe for go-redis's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestSetRedisLogger: what go-redis logs itself (here: a pool that cannot
// dial a closed port) comes out as a JSON WARN record of the current
// logger with component=redis, not as a plain "redis: ..." line.
func TestSetRedisLogger(t *testing.T) {
	var buf lockedBuffer
	l := slog.New(slog.NewJSONHandler(&buf, nil))
	SetRedisLogger(func() *slog.Logger { return l })
	t.Cleanup(func() { SetRedisLogger(func() *slog.Logger { return slog.New(slog.DiscardHandler) }) })

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, DialerRetries: 1, MaxRetries: -1})
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err == nil {
		t.Fatal("Ping of a closed port succeeded")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("go-redis's log is not a JSON record: %q", buf.String())
	}
	msg, _ := rec["msg"].(string)
	if rec["level"] != "WARN" || rec["component"] != "redis" || !strings.Contains(msg, "failed to dial") || strings.HasPrefix(msg, "redis: ") {
		t.Errorf("record %v; want level WARN, component redis, the dial failure without the \"redis: \" prefix", rec)
	}
}
