package bodyrate_test

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/portico-gateway/portico/gateway/bodyrate"
)

func TestDeadline(t *testing.T) {
	start := time.Unix(1000, 0)
	tests := []struct {
		name string
		rule bodyrate.Rule
		n    int64
		want time.Duration // after start; 0: no deadline
	}{
		{"grace before any byte", bodyrate.Rule{Timeout: 10 * time.Second, MinRate: 1024, Grace: time.Second}, 0, time.Second},
		{"each MinRate bytes earn a second", bodyrate.Rule{Timeout: 10 * time.Second, MinRate: 1024, Grace: time.Second}, 3 * 1024, 4 * time.Second},
		{"part of a second", bodyrate.Rule{Timeout: 10 * time.Second, MinRate: 1000, Grace: time.Second}, 500, 1500 * time.Millisecond},
		{"never past the timeout", bodyrate.Rule{Timeout: 10 * time.Second, MinRate: 1024, Grace: time.Second}, 1 << 20, 10 * time.Second},
		{"timeout alone", bodyrate.Rule{Timeout: 3 * time.Second}, 1 << 20, 3 * time.Second},
		{"rate alone", bodyrate.Rule{MinRate: 100, Grace: time.Second}, 1000, 11 * time.Second},
		{"a huge count saturates", bodyrate.Rule{MinRate: 1, Grace: time.Second}, 1 << 62, time.Second + 1<<62},
		{"nothing bounded", bodyrate.Rule{}, 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.rule.Deadline(start, tt.n)
			var want time.Time
			if tt.want != 0 {
				want = start.Add(tt.want)
			}
			if !got.Equal(want) {
				t.Errorf("Deadline(start, %d) = start+%v, want start+%v", tt.n, got.Sub(start), tt.want)
			}
		})
	}
}

// send writes body to c in pieces of size bytes, one every gap, then
// closes c (the body's EOF); it stops at the first failed write.
func send(c net.Conn, body string, size int, gap time.Duration) {
	defer c.Close()
	if body == "" { // silence: wait until the reader gives up
		_, _ = c.Read(make([]byte, 1))
	}
	for len(body) > 0 {
		n := min(size, len(body))
		if _, err := io.WriteString(c, body[:n]); err != nil {
			return
		}
		body = body[n:]
		time.Sleep(gap)
	}
}

func TestRead(t *testing.T) {
	rule := bodyrate.Rule{Timeout: 10 * time.Second, MinRate: 1000, Grace: time.Second}
	tests := []struct {
		name      string
		body      string
		size      int
		gap       time.Duration
		limit     int64
		wantErr   error
		wantWhole bool
		wantTook  time.Duration
	}{
		{"fast body", strings.Repeat("x", 5000), 5000, 0, 1 << 20, nil, true, 0},
		{"steady at twice the rate", strings.Repeat("x", 8000), 200, 100 * time.Millisecond, 1 << 20, nil, true, 4 * time.Second},
		{"a trickle is cut after the grace", strings.Repeat("x", 100), 1, 100 * time.Millisecond, 1 << 20, bodyrate.ErrTooSlow, false, 1011 * time.Millisecond},
		{"silence is cut after the grace", "", 0, 0, 1 << 20, bodyrate.ErrTooSlow, false, time.Second},
		{"a body that keeps up is cut at the timeout", strings.Repeat("x", 40000), 2000, time.Second, 1 << 20, bodyrate.ErrTooSlow, false, 10 * time.Second},
		{"over the limit stops reading", strings.Repeat("x", 5000), 5000, 0, 100, nil, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				server, client := net.Pipe()
				sent := make(chan struct{})
				defer func() { server.Close(); <-sent }()
				go func() {
					defer close(sent)
					send(client, tt.body, tt.size, tt.gap)
				}()
				start := time.Now()
				data, whole, err := bodyrate.Read(server, tt.limit, rule, server.SetReadDeadline)
				took := time.Since(start)
				if !errors.Is(err, tt.wantErr) || whole != tt.wantWhole {
					t.Fatalf("Read = %d bytes, whole %v, %v; want whole %v, %v", len(data), whole, err, tt.wantWhole, tt.wantErr)
				}
				if tt.wantWhole && string(data) != tt.body {
					t.Errorf("Read = %d bytes, want the %d sent", len(data), len(tt.body))
				}
				if !tt.wantWhole && tt.wantErr == nil && int64(len(data)) != tt.limit+1 {
					t.Errorf("Read over the limit = %d bytes, want limit+1 = %d", len(data), tt.limit+1)
				}
				if took != tt.wantTook {
					t.Errorf("Read took %v, want %v", took, tt.wantTook)
				}
			})
		})
	}
}

func TestReadWithoutDeadlines(t *testing.T) {
	unsupported := func(time.Time) error { return errors.New("no deadlines") }
	data, whole, err := bodyrate.Read(strings.NewReader("hello"), 10, bodyrate.Rule{Timeout: time.Second}, unsupported)
	if string(data) != "hello" || !whole || err != nil {
		t.Errorf("Read = %q, %v, %v; want hello, true, nil", data, whole, err)
	}
}
