package gateway

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/config"
)

// TestStreamHeartbeatAndIdle: an SSE watch whose upstream sends one
// message and then nothing gets keep-alive comments between, then ends
// with STREAM_RECONNECT at streams.idle_timeout, and its upstream call is
// cancelled. The timers run beside the handler's RecvMsg (no receiving
// goroutine), so this pins that they still fire and write.
func TestStreamHeartbeatAndIdle(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Streams.Heartbeat = 5 * time.Millisecond
		c.Streams.IdleTimeout = 200 * time.Millisecond
	}})
	stopped := make(chan time.Time, 1)
	h.order.watchOrder = blockAfter(nil, stopped)
	resp, _ := h.openStream("/api/orders/ord-1:watch", aliceToken, "text/event-stream")
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	first, beat, end := strings.Index(s, "data: {"), strings.Index(s, ": keep-alive\n\n"), strings.Index(s, "event: error\n")
	if first < 0 || beat < first || end < beat {
		t.Fatalf("stream %q: want a message, keep-alives, then event: error", s)
	}
	if !strings.Contains(s[end:], `"code":"STREAM_RECONNECT"`) || !strings.Contains(s[end:], "sent nothing for 200ms") {
		t.Errorf("terminal event %q, want STREAM_RECONNECT for the idle timeout", s[end:])
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream stream was not cancelled after the idle timeout")
	}
}
