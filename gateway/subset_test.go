package gateway

import (
	"slices"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/config"
)

// TestSubsetOfServices: a config with only the inventory upstream starts;
// /health and readiness follow that one upstream, the inventory routes are
// served and the routes of the services without an upstream answer 404;
// Warnings (check-config) names each service not served.
func TestSubsetOfServices(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Upstreams = slices.DeleteFunc(c.Upstreams, func(u config.UpstreamConfig) bool { return u.Name != "inventory" })
		c.Ops.ReadyRequires = []string{"inventory"}
	}})
	okStubs(h)
	h.srv.serving.Store(true) // as Serve does
	tests := []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/health", "", 200},
		{"GET", "/healthz/ready", "", 200},
		{"GET", "/api/inventory/a", "", 200},
		{"GET", "/api/orders/o1", "", 404},
		{"POST", "/api/orders", `{}`, 404},
		{"GET", "/api/payments/p1", "", 404},
	}
	for _, tt := range tests {
		if r := h.do(tt.method, tt.path, adminToken, tt.body); r.status != tt.want {
			t.Errorf("%s %s = %d %s, want %d", tt.method, tt.path, r.status, r.body, tt.want)
		}
	}
	if r := h.do("GET", "/health", "", ""); strings.Contains(string(r.body), `"order"`) || !strings.Contains(string(r.body), `"inventory"`) {
		t.Errorf("/health = %s, want the inventory upstream only", r.body)
	}
	var got []string
	for _, w := range Warnings(h.cfg) {
		if strings.Contains(w, "is not served") {
			got = append(got, w)
		}
	}
	want := []string{
		`upstreams: portico.payment.v1.PaymentService is not served (no upstream named "payment"): its routes answer 404`,
		`upstreams: portico.order.v1.OrderService is not served (no upstream named "order"): its routes answer 404`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Warnings() = %q, want %q", got, want)
	}
}
