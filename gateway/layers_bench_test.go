package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/edgemetrics"
	"github.com/portico-gateway/portico/gateway/problem"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// Per-layer micro-benchmarks of the edge's request path (issue 13): run
// with -benchmem and compare runs with benchstat. Route matching and JSON
// have theirs in packages route and jsonwire, the client chain in
// interceptors.

// benchKeyboard is the inventory stub's GetItem in the benchmarks: one
// small item, whatever the request.
func benchKeyboard(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	return &inventoryv1.Item{Sku: "kb-1", Name: "Keyboard", Available: 100}, nil
}

// BenchmarkGetItem is one GET /api/inventory/{sku} through the whole edge
// to a stub on loopback TCP.
func BenchmarkGetItem(b *testing.B) {
	h := newHarness(b, setup{})
	h.inv.getItem = benchKeyboard
	h.srv.log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	handler := h.srv.Handler()
	benchGetItem(b, handler, http.StatusOK)
}

func BenchmarkAuthenticate(b *testing.B) {
	toks := newHarness(b, setup{}).srv.snap.Load().auth // the dev profile's authenticator
	req := httptest.NewRequest(http.MethodGet, "/api/inventory/kb-1", nil)
	req.Header.Set("Authorization", "Bearer "+readerToken)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := toks.Authenticate(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProblemWrite(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		p := problem.New(problem.CodeNotFound, "No item kb-1.")
		p.Instance, p.TraceID = "/api/inventory/kb-1", "4bf92f3577b34da6a3ce929d0e0e4736"
		p.Write(httptest.NewRecorder())
	}
}

// BenchmarkAccessLog: a line written, and a line the sampled logger
// drops (its trace not kept, fast, a success), which is not built.
func BenchmarkAccessLog(b *testing.B) {
	zero := 0.0
	tid, _ := trace.TraceIDFromHex("0000000000000000ffffffffffffffff")
	traced := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}}))
	for _, bc := range []struct {
		name string
		log  *slog.Logger
	}{
		{"written", logging.New(io.Discard, "gateway", slog.LevelInfo)},
		{"sampled out", logging.Sample(logging.New(io.Discard, "gateway", slog.LevelInfo), logging.Sampling{Rate: &zero})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := &Server{log: bc.log}
			req := httptest.NewRequestWithContext(traced, http.MethodGet, "/api/inventory/kb-1", nil)
			ex := &exchange{traceID: "4bf92f3577b34da6a3ce929d0e0e4736", route: "/api/inventory/{sku}", upstream: "inventory"}
			b.ReportAllocs()
			for b.Loop() {
				s.logAccess(req, ex, http.StatusOK, 1200*time.Microsecond)
			}
		})
	}
}

// BenchmarkMetricsRequest: a route's success through the series Init
// bound, and an answer Init did not bind (a 404) by label lookup.
func BenchmarkMetricsRequest(b *testing.B) {
	m, err := edgemetrics.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	m.Init([]edgemetrics.Route{{Route: "/api/inventory/{sku}", Method: http.MethodGet, Upstream: "inventory"}}, nil)
	for _, bc := range []struct {
		name   string
		status int
		code   string
	}{{"bound", http.StatusOK, ""}, {"lookup", http.StatusNotFound, "NOT_FOUND"}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Request(edgemetrics.Answer{Route: "/api/inventory/{sku}", Method: http.MethodGet, Upstream: "inventory",
					Status: bc.status, Code: bc.code, Duration: 1200 * time.Microsecond})
			}
		})
	}
}

func BenchmarkShedAdmit(b *testing.B) {
	h := newHarness(b, setup{})
	req := httptest.NewRequest(http.MethodGet, "/api/inventory/kb-1", nil)
	sh := h.srv.snap.Load().shed
	rt, _ := sh.table.Match(req.Method, req.URL.Path)
	b.ReportAllocs()
	for b.Loop() {
		if sh.full(req) != nil {
			b.Fatal("full")
		}
		hold, full := sh.admit(req, rt)
		if full != nil {
			b.Fatal("shed")
		}
		hold.release()
	}
}

// BenchmarkGetItemShape is BenchmarkGetItem in the shape of bench-edge's
// (d): the real client chain, rate limits that never refuse, the
// process's JSON access log (redaction, trace ids; to io.Discard) and the
// configured tracer (no exporter: every span sampled out), with its client
// stats handler on the upstream connection, as the edge process wires it.
func BenchmarkGetItemShape(b *testing.B) {
	h := newHarness(b, setup{cfg: func(c *config.Config) {
		c.Limits = config.DevLimits()
		c.Limits.Plans = map[string]config.LimitConfig{"default": {Rate: 1_000_000, Burst: 1_000_000}}
		c.Limits.Groups = nil
		c.Limits.Global = &config.LimitConfig{Rate: 1_000_000, Burst: 1_000_000}
	}})
	h.inv.getItem = benchKeyboard
	tp, err := telemetry.New(context.Background(), h.cfg.Tracing())
	if err != nil {
		b.Fatal(err)
	}
	ups := NewUpstreams(interceptors.WithLogger(discardLogger()),
		interceptors.WithDialOptions(grpc.WithStatsHandler(tp.ClientHandler())))
	srv, err := New(context.Background(), h.cfg, WithUpstreams(ups), WithTelemetry(tp),
		WithLogger(logging.New(io.Discard, "gateway", slog.LevelInfo)), WithRegistry(prometheus.NewRegistry()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close(); ups.Close(); _ = tp.Shutdown(context.Background()) })
	handler := srv.Handler()
	benchGetItem(b, handler, http.StatusOK)
}

// benchGetItem serves GET /api/inventory/kb-1 as the reader to handler
// in b's loop, failing on any status but want.
func benchGetItem(b *testing.B, handler http.Handler, want int) {
	b.Helper()
	req := httptest.NewRequest(http.MethodGet, "/api/inventory/kb-1", nil)
	req.Header.Set("Authorization", "Bearer "+readerToken)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
