package gateway

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/telemetry"
	"github.com/portico-gateway/portico/internal/traceid"
)

func TestTraceID(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	const w3c = "4bf92f3577b34da6a3ce929d0e0e4736"
	tests := []struct {
		name   string
		path   string
		token  string
		header []string
		want   string // "" means a fresh id, not the sent one
		sent   string
	}{
		{"valid x-trace-id", "/api/orders/ord-1", adminToken, []string{"X-Trace-Id: trace-demo-2026"}, "trace-demo-2026", ""},
		{"traceparent", "/api/orders/ord-1", adminToken, []string{"Traceparent: 00-" + w3c + "-00f067aa0ba902b7-01"}, w3c, ""},
		{"traceparent wins", "/api/orders/ord-1", adminToken, []string{"X-Trace-Id: mine", "Traceparent: 00-" + w3c + "-00f067aa0ba902b7-01"}, w3c, ""},
		{"x-trace-id kept with its own traceparent", "/api/orders/ord-1", adminToken, []string{"X-Trace-Id: mine", "Traceparent: " + traceid.Traceparent("mine")}, "mine", ""},
		{"x-trace-id kept with a bad traceparent", "/api/orders/ord-1", adminToken, []string{"X-Trace-Id: mine", "Traceparent: 00-" + w3c + "-0000000000000000-01"}, "mine", ""},
		{"invalid replaced", "/api/orders/ord-1", adminToken, []string{"X-Trace-Id: bad id<script>"}, "", "bad id<script>"},
		{"too long replaced", "/api/orders/ord-1", adminToken, []string{"X-Trace-Id: " + strings.Repeat("a", 65)}, "", strings.Repeat("a", 65)},
		{"bad traceparent replaced", "/api/orders/ord-1", adminToken, []string{"Traceparent: 00-" + strings.Repeat("0", 32) + "-00f067aa0ba902b7-01"}, "", ""},
		{"on 401", "/api/orders/ord-1", "", []string{"X-Trace-Id: t-401"}, "t-401", ""},
		{"on 404", "/nowhere", "", []string{"X-Trace-Id: t-404"}, "t-404", ""},
		{"on health", "/health", "", []string{"X-Trace-Id: t-health"}, "t-health", ""},
		{"on metrics", "/metrics", "", []string{"X-Trace-Id: t-metrics"}, "t-metrics", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do("GET", tt.path, tt.token, "", tt.header...)
			got := r.header.Get("X-Trace-Id")
			switch {
			case tt.want != "" && got != tt.want:
				t.Errorf("X-Trace-Id = %q, want %q", got, tt.want)
			case tt.want == "" && (!traceid.Valid(got) || got == tt.sent || len(got) != 32):
				t.Errorf("X-Trace-Id = %q, want a fresh 32-hex id", got)
			}
			if r.status >= 400 && r.json(t)["traceId"] != got {
				t.Errorf("problem traceId = %v, want %q", r.json(t)["traceId"], got)
			}
		})
	}
}

func TestTracePropagation(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.getOrder = func(ctx context.Context, _ *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		return &orderv1.Order{Id: "ord-1"}, nil
	}
	const w3c = "4bf92f3577b34da6a3ce929d0e0e4736"
	tests := []struct {
		name   string
		header []string
	}{
		{"traceparent", []string{"Traceparent: 00-" + w3c + "-00f067aa0ba902b7-01"}},
		{"traceparent and x-trace-id", []string{"X-Trace-Id: trace-demo-2026", "Traceparent: 00-" + w3c + "-00f067aa0ba902b7-01"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.do(http.MethodGet, "/api/orders/ord-1", adminToken, "", tt.header...)
			md, _ := h.order.last()
			if got := md.Get("x-trace-id"); len(got) != 0 {
				t.Errorf("upstream x-trace-id = %v, want none: the traceparent carries %s", got, w3c)
			}
			tp := md.Get("traceparent")
			if len(tp) != 1 {
				t.Fatalf("upstream traceparent = %v, want one", tp)
			}
			if id, ok := traceid.ParseTraceparent(tp[0]); !ok || id != w3c || strings.Contains(tp[0], "00f067aa0ba902b7") {
				t.Errorf("upstream traceparent = %q, want trace-id %s with the edge's own parent-id", tp[0], w3c)
			}
		})
	}
}

// TestTraceResponseHeaders: the response carries the request's trace id
// and the edge span's W3C Trace Context (traceparent, the caller's
// tracestate kept), the traceparent the upstream got from the chain's
// trace layer, once.
func TestTraceResponseHeaders(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.getOrder = func(ctx context.Context, _ *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		return &orderv1.Order{Id: "ord-1"}, nil
	}
	const w3c = "4bf92f3577b34da6a3ce929d0e0e4736"
	tests := []struct {
		name   string
		header []string
		wantID string
		wantTS []string
	}{
		{"traceparent and tracestate", []string{"Traceparent: 00-" + w3c + "-00f067aa0ba902b7-01", "Tracestate: v=1"}, w3c, []string{"v=1"}},
		{"x-trace-id", []string{"X-Trace-Id: trace-demo-2026"}, "trace-demo-2026", nil},
		{"nothing", nil, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(http.MethodGet, "/api/orders/ord-1", adminToken, "", tt.header...)
			id := r.header.Values("X-Trace-Id")
			if len(id) != 1 || tt.wantID != "" && id[0] != tt.wantID {
				t.Fatalf("X-Trace-Id = %q, want [%s]", id, tt.wantID)
			}
			tp := r.header.Values("Traceparent")
			if len(tp) != 1 || !strings.HasSuffix(tp[0], "-00") || strings.Contains(tp[0], "00f067aa0ba902b7") {
				t.Fatalf("response traceparent = %q, want the edge span's, unsampled", tp)
			}
			if got, ok := traceid.ParseTraceparent(tp[0]); !ok || got != traceid.TraceID(id[0]) {
				t.Errorf("response traceparent %q: want trace id %s", tp[0], traceid.TraceID(id[0]))
			}
			if ts := r.header.Values("Tracestate"); !slices.Equal(ts, tt.wantTS) {
				t.Errorf("response tracestate = %q, want %q", ts, tt.wantTS)
			}
			md, _ := h.order.last()
			if got := md.Get("traceparent"); len(got) != 1 || got[0] != tp[0] {
				t.Errorf("upstream traceparent = %q, want the response's %q", got, tp[0])
			}
		})
	}
}

// FuzzRequestTraceID: the edge's trace id is always valid; a valid
// traceparent wins unless it was derived from the X-Trace-Id sent with
// it; else a valid X-Trace-Id is kept verbatim; and the span's W3C trace
// id is always the one the id stands for (traceid.TraceID), so X-Trace-Id
// and the trace agree.
func FuzzRequestTraceID(f *testing.F) {
	s := &Server{tracer: telemetry.Disabled("t").TracerProvider().Tracer("t")}
	f.Add("trace-demo-2026", "")
	f.Add("", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("bad id", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("\n{\"level\":\"ERROR\"}", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra")
	f.Fuzz(func(t *testing.T, xTraceID, traceparent string) {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		if xTraceID != "" {
			r.Header.Set("X-Trace-Id", xTraceID)
		}
		if traceparent != "" {
			r.Header.Set("Traceparent", traceparent)
		}
		ctx, span, id, spanTP := s.startSpan(r)
		if got, ok := traceid.ParseTraceparent(spanTP); traceid.FromContext(ctx) != id || !ok || got != traceid.TraceID(id) {
			t.Fatalf("startSpan(%q, %q): context id %q, traceparent %q, want id %q and its trace", xTraceID, traceparent, traceid.FromContext(ctx), spanTP, id)
		}
		if got := span.SpanContext().TraceID().String(); got != traceid.TraceID(id) {
			t.Fatalf("startSpan(%q, %q): span trace id %s, want %s (from id %q)", xTraceID, traceparent, got, traceid.TraceID(id), id)
		}
		if !traceid.Valid(id) {
			t.Fatalf("startSpan(%q, %q) = %q, not a valid id", xTraceID, traceparent, id)
		}
		tp, tpOK := traceid.ParseTraceparent(traceparent)
		ownTP := tpOK && traceid.Valid(xTraceID) && tp == traceid.TraceID(xTraceID)
		switch {
		case tpOK && !ownTP && id != tp:
			t.Fatalf("startSpan(%q, %q) = %q, want the traceparent's id", xTraceID, traceparent, id)
		case (!tpOK || ownTP) && traceid.Valid(xTraceID) && id != xTraceID:
			t.Fatalf("startSpan(%q, %q) = %q, want the X-Trace-Id", xTraceID, traceparent, id)
		}
	})
}

// TestTraceIDOnEveryAnswer walks paths and methods, ops and /api, routed or
// not, with and without a token: every answer carries a valid X-Trace-Id.
func TestTraceIDOnEveryAnswer(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	paths := []string{
		"/", "/health", "/healthz/live", "/healthz/ready", "/metrics", "/openapi.json",
		"/favicon.ico", "/health/", "/api", "/api/", "/api/nope", "/api/orders", "/api/orders/",
		"/api/orders/ord-1", "/api/orders/ord-1:cancel", "/api/inventory?colour=red",
	}
	methods := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
	for _, path := range paths {
		for _, method := range methods {
			for _, token := range []string{"", adminToken} {
				r := h.do(method, path, token, "")
				if got := r.header.Get("X-Trace-Id"); !traceid.Valid(got) {
					t.Errorf("%s %s (token %t) = %d with X-Trace-Id %q, want a valid id", method, path, token != "", r.status, got)
				}
			}
		}
	}
}

// BenchmarkStartSpan is the edge's span for a request that continues a
// caller's trace (traceparent and tracestate).
func BenchmarkStartSpan(b *testing.B) {
	s := &Server{tracer: telemetry.Disabled("t").TracerProvider().Tracer("t")}
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	r.Header.Set("Tracestate", "v=1")
	b.ReportAllocs()
	for b.Loop() {
		s.startSpan(r)
	}
}
