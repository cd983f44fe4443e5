package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/grpc/status"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
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
			h := newHarness(t, setup{cfg: func(c *Config) {
				c.Routes.Overrides = map[string]RouteOverride{
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
