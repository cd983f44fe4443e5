package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/config"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// TestRouteDeadline: every call carries a deadline: the route's, or the
// client's Grpc-Timeout clamped to the route maximum.
func TestRouteDeadline(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Routes.Overrides = map[string]config.RouteOverride{
			"portico.order.v1.OrderService/GetOrder": {Timeout: 3 * time.Second, MaxTimeout: 4 * time.Second},
		}
	}})
	left := make(chan time.Duration, 1)
	h.order.getOrder = func(ctx context.Context, _ *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		d, ok := ctx.Deadline()
		if !ok {
			left <- -1
		} else {
			left <- time.Until(d)
		}
		return &orderv1.Order{Id: "ord-1"}, nil
	}
	h.order.listOrders = func(ctx context.Context, _ *orderv1.ListOrdersRequest) (*orderv1.ListOrdersResponse, error) {
		d, _ := ctx.Deadline()
		left <- time.Until(d)
		return &orderv1.ListOrdersResponse{}, nil
	}
	tests := []struct {
		name     string
		path     string
		header   []string
		min, max time.Duration
	}{
		{"route override", "/api/orders/ord-1", nil, 2 * time.Second, 3 * time.Second},
		{"upstream default", "/api/orders", nil, 4 * time.Second, config.DefaultUpstreamTimeout},
		{"client shorter", "/api/orders/ord-1", []string{"Grpc-Timeout: 500m"}, 100 * time.Millisecond, 500 * time.Millisecond},
		{"client longer than default", "/api/orders/ord-1", []string{"Grpc-Timeout: 3500m"}, 3 * time.Second, 3500 * time.Millisecond},
		{"clamped to route max", "/api/orders/ord-1", []string{"Grpc-Timeout: 10H"}, 3 * time.Second, 4 * time.Second},
		{"clamped to global max", "/api/orders", []string{"Grpc-Timeout: 99999999H"}, 25 * time.Second, config.DefaultMaxTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do("GET", tt.path, adminToken, "", tt.header...)
			if r.status != 200 {
				t.Fatalf("status = %d %s", r.status, r.body)
			}
			if d := <-left; d < tt.min || d > tt.max {
				t.Errorf("upstream deadline in %v, want %v..%v", d, tt.min, tt.max)
			}
		})
	}
}

// TestZeroTimeoutDetail: a zero Grpc-Timeout is refused saying zero is not
// allowed (the wire format's shape it has); a malformed one says the shape.
func TestZeroTimeoutDetail(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	for _, tt := range []struct{ header, want string }{
		{"0S", "must not be zero"},
		{"000m", "must not be zero"},
		{"1s", "must be 1-8 digits and a unit"},
	} {
		r := h.do("GET", "/api/orders/ord-1", adminToken, "", "Grpc-Timeout: "+tt.header)
		body := r.json(t)
		if detail, _ := body["detail"].(string); r.status != 400 || body["code"] != "INVALID_TIMEOUT" || !strings.Contains(detail, tt.want) {
			t.Errorf("Grpc-Timeout %s = %d %v, want 400 INVALID_TIMEOUT saying %q", tt.header, r.status, body, tt.want)
		}
	}
}
