package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// BenchmarkGetItemStale is BenchmarkGetItem (a GET that reaches the
// upstream and answers 200) with the copies off (stale.max_bytes: -1)
// and on (GetItem's option, the default ceiling): what keeping the last
// answer costs a request. cpu-ns/op is the process's user+system CPU time
// per request (the stub upstream's included, in both).
func BenchmarkGetItemStale(b *testing.B) {
	for _, bc := range []struct {
		name     string
		maxBytes int64
	}{{"off", -1}, {"on", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			h := newHarness(b, setup{cfg: func(c *config.Config) { c.Stale.MaxBytes = bc.maxBytes }})
			h.inv.getItem = func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
				return &inventoryv1.Item{Sku: "kb-1", Name: "Keyboard", Available: 100}, nil
			}
			h.srv.log = slog.New(slog.NewJSONHandler(io.Discard, nil))
			start := cpuTime(b)
			benchGetItem(b, h.srv.Handler(), http.StatusOK)
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
			if st := h.srv.copies.lru.Stats(); (st.Copies > 0) != (bc.maxBytes >= 0) {
				b.Fatalf("copies kept = %d with max_bytes %d", st.Copies, bc.maxBytes)
			}
		})
	}
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
