package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/logging"
)

// TestAccessLogLevel: a request that ends because of its own client (a
// Grpc-Timeout shorter than the route's, or hanging up) is a client outcome,
// logged at WARN; a route's own deadline running out is the upstream's
// failure, logged at ERROR.
func TestAccessLogLevel(t *testing.T) {
	tests := []struct {
		name       string
		header     []string
		hangUp     bool
		wantStatus float64
		wantLevel  string
	}{
		{"route deadline", nil, false, http.StatusGatewayTimeout, "ERROR"},
		{"client's shorter Grpc-Timeout", []string{"Grpc-Timeout: 20m"}, false, http.StatusGatewayTimeout, "WARN"},
		{"client hung up", nil, true, 499, "WARN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{cfg: func(c *config.Config) {
				c.Routes.Overrides = map[string]config.RouteOverride{
					"portico.order.v1.OrderService/GetOrder": {Timeout: 300 * time.Millisecond},
				}
			}})
			called := make(chan struct{})
			h.order.getOrder = func(ctx context.Context, _ *orderv1.GetOrderRequest) (*orderv1.Order, error) {
				close(called)
				<-ctx.Done()
				return nil, status.FromContextError(ctx.Err()).Err()
			}
			if tt.hangUp {
				ctx, cancel := context.WithCancel(context.Background())
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.http.URL+"/api/orders/ord-1", nil)
				req.Header.Set("Authorization", "Bearer "+adminToken)
				go func() { <-called; cancel() }()
				if resp, err := h.http.Client().Do(req); err == nil {
					resp.Body.Close()
					t.Fatalf("status %d, want the request cancelled", resp.StatusCode)
				}
			} else {
				r := h.do("GET", "/api/orders/ord-1", adminToken, "", tt.header...)
				if r.status != int(tt.wantStatus) {
					t.Fatalf("status = %d %s, want %v", r.status, r.body, tt.wantStatus)
				}
			}
			h.http.Close() // waits for the handler, and so for its access line
			lines := h.logs.lines(t, "request")
			if len(lines) != 1 {
				t.Fatalf("got %d access lines, want 1:\n%s", len(lines), h.logs.String())
			}
			if l := lines[0]; l["status"] != tt.wantStatus || l["level"] != tt.wantLevel {
				t.Errorf("access line status %v level %v, want %v %s", l["status"], l["level"], tt.wantStatus, tt.wantLevel)
			}
		})
	}
}

// brokenConn is a ResponseWriter whose client has gone away: every body
// write fails, as on a reset connection.
type brokenConn struct {
	header http.Header
	writes int
}

func (b *brokenConn) Header() http.Header { return b.header }
func (b *brokenConn) WriteHeader(int)     {}
func (b *brokenConn) Write([]byte) (int, error) {
	b.writes++
	return 0, errors.New("write tcp: broken pipe")
}

// TestClientGoneMidResponse: a client that hangs up while the answer is
// written is the client's outcome: one access line at WARN naming it, not
// an ERROR from grpc-gateway's own logger.
func TestClientGoneMidResponse(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.getOrder = func(context.Context, *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		return &orderv1.Order{Id: "ord-1"}, nil
	}
	req := httptest.NewRequest(http.MethodGet, "/api/orders/ord-1", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	w := &brokenConn{header: http.Header{}}
	h.http.Config.Handler.ServeHTTP(w, req)
	if w.writes == 0 {
		t.Fatal("the answer was never written")
	}
	lines := h.logs.lines(t, "request")
	if len(lines) != 1 {
		t.Fatalf("got %d access lines, want 1:\n%s", len(lines), h.logs.String())
	}
	if l := lines[0]; l["level"] != "WARN" || l["clientGone"] == nil {
		t.Errorf("access line level %v clientGone %v, want WARN and the write error", l["level"], l["clientGone"])
	}
}

// slogOnly hides the handler it wraps from logging.Direct, so logAccess
// takes the slog path.
type slogOnly struct{ slog.Handler }

// TestAccessLineDirect: the access line logAccess writes through
// logging.Direct for the edge's own logger is the line the slog handler
// chain writes for the same request (the time aside, taken per call;
// package logging compares whole lines).
func TestAccessLineDirect(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	traced := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{7}}))
	tests := []struct {
		name   string
		target string
		ua     string
		status int
		ex     exchange
	}{
		{"success", "/api/inventory/kb-1", "curl/8.5.0", 200, exchange{route: "/api/inventory/{sku}", upstream: "inventory", respBytes: 61}},
		{"error", "/api/orders/ord-1", "", 502, exchange{route: "/api/orders/{id}", code: "UNAVAILABLE", logErr: "rpc error: code = Unavailable desc = \"refused\"\n"}},
		{"client gone", "/api/orders", "Go-http-client/1.1", 499, exchange{code: "CANCELLED", writeErr: errors.New("write: broken pipe")}},
		{"odd UTF-8 and control characters", "/api/%FF%00%E2%80%A8x", "a\xffb\x01\u2029\t\"\\<>", 404, exchange{code: "NOT_FOUND"}},
		{"long user agent", "/api/inventory/kb-1", strings.Repeat("Mozilla/5.0 (X11; Linux x86_64) ", 40), 200, exchange{}},
		{"secrets", "/api/x/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln", "tool access_token=abc Bearer xyz", 401,
			exchange{code: "UNAUTHENTICATED", logErr: "Authorization: Basic dXNlcjpwYXNz", principal: auth.Principal{Subject: "api_key=k"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var direct, viaSlog bytes.Buffer
			req := httptest.NewRequestWithContext(traced, http.MethodPost, tc.target, nil)
			req.Header.Set("User-Agent", tc.ua)
			ex := tc.ex
			(&Server{log: logging.New(&direct, "gateway", slog.LevelInfo)}).logAccess(req, &ex, tc.status, 1234567*time.Nanosecond)
			ex = tc.ex
			(&Server{log: slog.New(slogOnly{logging.New(&viaSlog, "gateway", slog.LevelInfo).Handler()})}).logAccess(req, &ex, tc.status, 1234567*time.Nanosecond)
			d, s := untimed(t, direct.String()), untimed(t, viaSlog.String())
			if d != s {
				t.Errorf("logAccess wrote\n%q\nthrough slog\n%q", d, s)
			}
		})
	}
}

// untimed is the one JSON line in s with its time value cut out.
func untimed(t *testing.T, s string) string {
	t.Helper()
	const prefix = `{"time":"`
	end := strings.Index(s, `","level":`)
	if !strings.HasPrefix(s, prefix) || end < 0 || strings.Count(s, "\n") != 1 || !json.Valid([]byte(s)) {
		t.Fatalf("not one JSON line with a time: %q", s)
	}
	return s[end:]
}
