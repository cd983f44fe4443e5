package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/problem"
)

// TestRefusalBytes: the refusal built once sends exactly what
// problem.Write sends for the same problem, for the edge's cap and a
// group's; a path JSON would escape or cut is left to problem.Write.
func TestRefusalBytes(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, tt := range []struct {
		name, scope, path, base string
		fast                    bool
	}{
		{"edge", edgeScope, "/api/inventory/kb-1", "", true},
		{"group", "orders", "/api/orders/o%22-1", "", true},
		{"retry after 7", "orders", "/api", "", true},
		{"type base", edgeScope, "/api/inventory/kb-1", "https://api.example.com/problems/", true},
		{"long path", edgeScope, "/api/" + strings.Repeat("a", problem.MaxEchoBytes), "", false},
		{"quote", edgeScope, `/api/"x"`, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			retry := 2
			if tt.name == "retry after 7" {
				retry = 7
			}
			fast := httptest.NewRecorder()
			ok := newRefusal(tt.scope, retry, tt.base).write(fast, tt.path, id)
			if ok != tt.fast {
				t.Fatalf("write(%q) = %v, want %v", tt.path, ok, tt.fast)
			}
			if !ok {
				if fast.Body.Len() != 0 || len(fast.Header()) != 0 {
					t.Errorf("write(%q) refused but sent %v %q", tt.path, fast.Header(), fast.Body)
				}
				return
			}
			slow := httptest.NewRecorder()
			p := problem.New(problem.CodeOverloaded, overloadDetail(tt.scope))
			p.Instance, p.TraceID, p.RetryAfter = tt.path, id, retry
			p.Rebase(tt.base)
			p.Write(slow)
			if fast.Code != slow.Code || fast.Body.String() != slow.Body.String() {
				t.Errorf("refusal = %d %s\nproblem.Write = %d %s", fast.Code, fast.Body, slow.Code, slow.Body)
			}
			if d := cmp.Diff(slow.Header(), fast.Header()); d != "" {
				t.Errorf("headers (-problem.Write +refusal):\n%s", d)
			}
		})
	}
}

// BenchmarkRefusalWrite is the refusal's own cost, apart from the handler
// and net/http around it.
func BenchmarkRefusalWrite(b *testing.B) {
	rf := newRefusal(edgeScope, 2, "")
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		rf.write(w, "/api/inventory/kb-1", "4bf92f3577b34da6a3ce929d0e0e4736")
	}
}

// discardWriter is a ResponseWriter that keeps the status and drops the
// body.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header               { return w.h }
func (w *discardWriter) Write(p []byte) (int, error)       { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)              { w.code = code }
func (w *discardWriter) WriteString(s string) (int, error) { return len(s), nil }

// TestShedRefusalTraceID: a refusal carries the caller's trace id, from a
// traceparent or an X-Trace-Id, in the header and the body alike.
func TestShedRefusalTraceID(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) { c.Shed = config.ShedConfig{MaxInFlight: 1} }})
	h.srv.snap.Load().shed.edge.TryAcquire() // the one slot is taken: every request is refused
	defer h.srv.snap.Load().shed.edge.Release()
	for _, tt := range []struct{ name, header, value, want string }{
		{"traceparent", "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"x-trace-id", "X-Trace-Id", "my-trace-1", "my-trace-1"},
		{"invalid", "X-Trace-Id", "bad id\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/api/inventory/kb-1", nil)
			req.Header.Set(tt.header, tt.value)
			rec := httptest.NewRecorder()
			h.srv.Handler().ServeHTTP(rec, req)
			got := rec.Header().Get(traceHeader)
			if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"traceId":"`+got+`"`) {
				t.Fatalf("%d %s with X-Trace-Id %q: want 503 with the same traceId", rec.Code, rec.Body, got)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("X-Trace-Id = %q, want %q", got, tt.want)
			}
			if tt.want == "" && (got == "" || strings.Contains(got, " ")) {
				t.Errorf("X-Trace-Id = %q, want a fresh id", got)
			}
		})
	}
}

// refsWriter records the live snapshot's references when the answer's
// status is written.
type refsWriter struct {
	discardWriter
	s    *Server
	refs int64
}

func (w *refsWriter) WriteHeader(code int) {
	w.refs = w.s.snap.Load().refs.Load()
	w.discardWriter.WriteHeader(code)
}

// TestShedRefusalHoldsNoSnapshot: shedding is the handler's first step, so
// a refusal is answered without acquiring the config snapshot (nor
// anything after it: span, access line, metrics).
func TestShedRefusalHoldsNoSnapshot(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) { c.Shed = config.ShedConfig{MaxInFlight: 1} }})
	h.srv.snap.Load().shed.edge.TryAcquire() // the one slot is taken: every request is refused
	defer h.srv.snap.Load().shed.edge.Release()
	before := h.srv.snap.Load().refs.Load()
	w := &refsWriter{discardWriter: discardWriter{h: http.Header{}}, s: h.srv}
	h.srv.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/inventory/kb-1", nil))
	if w.code != http.StatusServiceUnavailable || w.refs != before {
		t.Errorf("refusal: status %d with %d snapshot references, want 503 with %d (none taken)", w.code, w.refs, before)
	}
}
