package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
			h.inv.getItem = benchKeyboard
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

// BenchmarkStaleCapture is the edge's own work for a copy of one GetItem
// 200, without the network and grpc-gateway that BenchmarkGetItemStale
// includes: startCapture, the capture of the call's message (the message
// grpc-gateway bound, from a context as deep as a call's), recording the
// body, and keepCopy's key and LRU update.
func BenchmarkStaleCapture(b *testing.B) {
	s := &Server{copies: newStaleCopies()}
	s.copies.setMax(1 << 20)
	ep := &endpoint{Route: inventoryRoute(b, "GET /api/inventory/{sku}"), stale: &staleRule{maxStale: time.Minute, public: true}}
	r := httptest.NewRequest(http.MethodGet, "/api/inventory/kb-1", nil)
	msg := &inventoryv1.GetItemRequest{Sku: "kb-1"} // grpc-gateway's
	body := []byte(`{"sku":"kb-1","name":"Keyboard","available":"100"}`)
	w := headerOnly{"Content-Type": {"application/json"}}
	b.ReportAllocs()
	for b.Loop() {
		ex := &exchange{snap: &snapshot{}, ep: ep}
		ex.rw = responseWriter{ResponseWriter: w, ex: ex}
		ctx := withExchange(r.Context(), ex)
		for range 6 { // the deadline, answered record, cancel, metadata and annotations
			ctx = context.WithValue(ctx, benchKey{}, nil)
		}
		s.startCapture(ex, r)
		captureRequest(ctx, msg)
		_, _ = ex.rw.Write(body)
		s.keepCopy(&ex.rw, ex)
	}
}

type benchKey struct{}

// headerOnly is a ResponseWriter that keeps its header and drops the rest.
type headerOnly http.Header

func (h headerOnly) Header() http.Header       { return http.Header(h) }
func (headerOnly) Write(b []byte) (int, error) { return len(b), nil }
func (headerOnly) WriteHeader(int)             {}
