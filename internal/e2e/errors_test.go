package e2e

import (
	"strings"
	"testing"
)

const inv = "/portico.inventory.v1.InventoryService/"

// TestErrorTable reaches every row of the error table of docs/errors.md for real,
// through the edge and the three service processes.
func TestErrorTable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	faults := "code=RESOURCE_EXHAUSTED,method=" + inv + "GetReservation;" +
		"code=UNIMPLEMENTED,method=" + inv + "CreateItem;" +
		"code=INTERNAL,method=" + inv + "ListItems"
	c := startClusterWith(t, []string{"--faults", faults}, nil)
	e := startEdge(t, c, noBreaker, nil)
	big := `{"lines":[{"sku":"` + strings.Repeat("a", 1<<20) + `","quantity":1}],"paymentMethod":"pm_card_ok"}`
	rows := []struct {
		name, method, path, token, body string
		headers                         []string
		status                          int
		code                            string
		check                           func(t *testing.T, r reply)
	}{
		{name: "400 invalid argument names the field", method: "POST", path: "/api/orders", token: "demo-alice-token",
			body: orderBodyFor("keyboard-001", 0, "pm_card_ok"), headers: []string{"Idempotency-Key: e1"}, status: 400, code: "INVALID_ARGUMENT",
			check: func(t *testing.T, r reply) {
				if !strings.Contains(string(r.body), `lines[0].quantity`) {
					t.Errorf("errors member lacks lines[0].quantity: %s", r.body)
				}
			}},
		{name: "400 a 500 KB payment method names the field", method: "POST", path: "/api/orders", token: "demo-alice-token",
			body: orderBodyFor("keyboard-001", 1, strings.Repeat("p", 500_000)), headers: []string{"Idempotency-Key: e10"}, status: 400, code: "INVALID_ARGUMENT",
			check: func(t *testing.T, r reply) {
				if !strings.Contains(string(r.body), `"field":"paymentMethod"`) || len(r.body) > 4096 {
					t.Errorf("want a short problem naming paymentMethod, got %d bytes: %.300s", len(r.body), r.body)
				}
			}},
		{name: "400 malformed json", method: "POST", path: "/api/orders", token: "demo-alice-token",
			body: `{"lines":`, headers: []string{"Idempotency-Key: e2"}, status: 400},
		{name: "400 duplicate key", method: "POST", path: "/api/orders", token: "demo-alice-token",
			body:    `{"paymentMethod":"pm_card_ok","paymentMethod":"pm_card_declined","lines":[{"sku":"keyboard-001","quantity":1}]}`,
			headers: []string{"Idempotency-Key: e3"}, status: 400},
		{name: "400 unknown field", method: "POST", path: "/api/orders", token: "demo-alice-token",
			body:    `{"lines":[{"sku":"keyboard-001","quantity":1}],"paymentMethod":"pm_card_ok","customer":"bob"}`,
			headers: []string{"Idempotency-Key: e4"}, status: 400},
		{name: "400 idempotency key missing", method: "POST", path: "/api/orders", token: "demo-alice-token",
			body: orderBody, status: 400, code: "IDEMPOTENCY_KEY_MISSING"},
		{name: "400 malformed grpc-timeout", method: "GET", path: "/api/inventory/keyboard-001", token: "demo-read-token",
			headers: []string{"Grpc-Timeout: 1x"}, status: 400},
		{name: "401 no token", method: "GET", path: "/api/orders", status: 401, code: "UNAUTHENTICATED"},
		{name: "401 unknown token", method: "GET", path: "/api/orders", token: "nope", status: 401, code: "UNAUTHENTICATED"},
		{name: "403 reader cannot write", method: "POST", path: "/api/orders", token: "demo-read-token",
			body: orderBody, headers: []string{"Idempotency-Key: e5"}, status: 403, code: "FORBIDDEN"},
		{name: "404 unknown route", method: "GET", path: "/api/createOrder", token: "demo-admin-token", status: 404, code: "ROUTE_NOT_FOUND"},
		{name: "404 unknown order", method: "GET", path: "/api/orders/ord-missing", token: "demo-alice-token", status: 404},
		{name: "405 wrong method", method: "DELETE", path: "/api/orders", token: "demo-admin-token", status: 405,
			check: func(t *testing.T, r reply) {
				if r.header.Get("Allow") == "" {
					t.Error("405 without Allow")
				}
			}},
		{name: "409 insufficient stock", method: "POST", path: "/api/orders", token: "demo-alice-token",
			body: orderBodyFor("keyboard-001", 1000, "pm_card_ok"), headers: []string{"Idempotency-Key: e6"}, status: 409, code: "INSUFFICIENT_STOCK"},
		{name: "413 body too large", method: "POST", path: "/api/orders", token: "demo-alice-token",
			body: big, headers: []string{"Idempotency-Key: e7"}, status: 413},
		{name: "415 wrong content type", method: "POST", path: "/api/orders", token: "demo-alice-token",
			body: orderBody, headers: []string{"Idempotency-Key: e8", "Content-Type: text/plain"}, status: 415},
		{name: "422 payment declined", method: "POST", path: "/api/orders", token: "demo-alice-token",
			body: orderBodyFor("mouse-001", 1, "pm_card_declined"), headers: []string{"Idempotency-Key: e9"}, status: 422, code: "PAYMENT_DECLINED"},
		{name: "429 upstream quota", method: "GET", path: "/api/reservations/res-x", token: "demo-admin-token", status: 429},
		{name: "500 internal, generic detail", method: "GET", path: "/api/inventory", token: "demo-read-token", status: 500,
			check: func(t *testing.T, r reply) {
				if strings.Contains(string(r.body), "FAULT_INJECTED") || strings.Contains(string(r.body), "injected") {
					t.Errorf("500 leaks the upstream message: %s", r.body)
				}
			}},
		{name: "501 unimplemented", method: "POST", path: "/api/inventory", token: "demo-admin-token",
			body: `{"sku":"pad-001","name":"Pad","unitPrice":{"amountMinor":"100","currency":"USD"},"available":"1"}`, status: 501},
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, tt.method, e.url+tt.path, tt.token, tt.body, tt.headers...)
			if r.status != tt.status {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, r.status, r.body, tt.status)
			}
			checkProblem(t, r, tt.path)
			if tt.code != "" && r.code() != tt.code {
				t.Errorf("code = %q, want %q", r.code(), tt.code)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
	t.Run("422 same key different body", func(t *testing.T) {
		first := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: reuse")
		replay := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: reuse")
		if first.status != 201 || replay.status != 201 || replay.header.Get("Idempotent-Replayed") != "true" ||
			replay.header.Get("Location") != first.header.Get("Location") {
			t.Fatalf("first %d, replay %d (%q, %q vs %q)", first.status, replay.status,
				replay.header.Get("Idempotent-Replayed"), replay.header.Get("Location"), first.header.Get("Location"))
		}
		r := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBodyFor("keyboard-001", 2, "pm_card_ok"), "Idempotency-Key: reuse")
		if r.status != 422 || r.code() != "IDEMPOTENCY_KEY_REUSED" {
			t.Errorf("got %d %s, want 422 IDEMPOTENCY_KEY_REUSED", r.status, r.body)
		}
		checkProblem(t, r, "/api/orders")
	})
	// The failure rows change the cluster, so they run last, in order.
	t.Run("504 hung upstream (SIGSTOP)", func(t *testing.T) {
		c.inv.Pause()
		defer c.inv.Resume()
		r := call(t, "GET", e.url+"/api/inventory/keyboard-001", "demo-read-token", "", "Grpc-Timeout: 300m")
		if r.status != 504 || r.code() != "UPSTREAM_TIMEOUT" {
			t.Fatalf("got %d %s, want 504 UPSTREAM_TIMEOUT", r.status, r.body)
		}
		checkProblem(t, r, "/api/inventory/keyboard-001")
		if !strings.Contains(string(r.body), "inventory") {
			t.Errorf("504 does not name the hop: %s", r.body)
		}
	})
	t.Run("503 live upstream answers unavailable", func(t *testing.T) {
		c.inv.Kill()
		r := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: e10")
		if r.status != 503 || r.header.Get("Retry-After") == "" {
			t.Fatalf("got %d %s (Retry-After %q), want 503 with Retry-After", r.status, r.body, r.header.Get("Retry-After"))
		}
		checkProblem(t, r, "/api/orders")
	})
	// 502, not a 504 after the upstream's 5s timeout: a refused connection
	// is answered at once.
	t.Run("502 upstream unreachable, fast", func(t *testing.T) {
		c.pay.Kill()
		r := call(t, "GET", e.url+"/api/payments/pay-x", "demo-admin-token", "")
		if r.status != 502 || r.code() != "UPSTREAM_UNAVAILABLE" {
			t.Fatalf("got %d %s, want 502 UPSTREAM_UNAVAILABLE", r.status, r.body)
		}
		checkProblem(t, r, "/api/payments/pay-x")
	})
}
