package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// okStubs makes every RPC the matrix uses succeed.
func okStubs(h *harness) {
	item := func() (*inventoryv1.Item, error) { return &inventoryv1.Item{Sku: "a"}, nil }
	res := func() (*inventoryv1.Reservation, error) { return &inventoryv1.Reservation{Id: "res-1"}, nil }
	ord := func() (*orderv1.Order, error) { return &orderv1.Order{Id: "ord-1"}, nil }
	pay := func() (*paymentv1.Payment, error) { return &paymentv1.Payment{Id: "pay-1"}, nil }
	h.inv.getItem = func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) { return item() }
	h.inv.listItems = func(context.Context, *inventoryv1.ListItemsRequest) (*inventoryv1.ListItemsResponse, error) {
		return &inventoryv1.ListItemsResponse{}, nil
	}
	h.inv.createItem = func(context.Context, *inventoryv1.CreateItemRequest) (*inventoryv1.Item, error) { return item() }
	h.inv.updateItem = func(context.Context, *inventoryv1.UpdateItemRequest) (*inventoryv1.Item, error) { return item() }
	h.inv.reserveStock = func(context.Context, *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
		return res()
	}
	h.inv.getReservation = func(context.Context, *inventoryv1.GetReservationRequest) (*inventoryv1.Reservation, error) {
		return res()
	}
	h.order.createOrder = func(context.Context, *orderv1.CreateOrderRequest) (*orderv1.Order, error) { return ord() }
	h.order.getOrder = func(context.Context, *orderv1.GetOrderRequest) (*orderv1.Order, error) { return ord() }
	h.order.listOrders = func(context.Context, *orderv1.ListOrdersRequest) (*orderv1.ListOrdersResponse, error) {
		return &orderv1.ListOrdersResponse{}, nil
	}
	h.order.cancelOrder = func(context.Context, *orderv1.CancelOrderRequest) (*orderv1.Order, error) { return ord() }
	h.pay.getPayment = func(context.Context, *paymentv1.GetPaymentRequest) (*paymentv1.Payment, error) { return pay() }
	h.pay.createPayment = func(context.Context, *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) { return pay() }
}

// TestAuthMatrix checks every role against every kind of route: 2xx when
// allowed, 401/403 otherwise, and no upstream call when denied.
func TestAuthMatrix(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	type call struct{ method, path, body string }
	calls := []call{
		{"GET", "/api/inventory", ""},
		{"GET", "/api/inventory/a", ""},
		{"HEAD", "/api/inventory/a", ""},
		{"POST", "/api/inventory", `{"sku":"a"}`},
		{"PATCH", "/api/inventory/a", `{"name":"A"}`},
		{"POST", "/api/reservations", `{"orderId":"ord-1"}`},
		{"GET", "/api/reservations/res-1", ""},
		{"GET", "/api/orders", ""},
		{"GET", "/api/orders/ord-1", ""},
		{"POST", "/api/orders", orderBody},
		{"POST", "/api/orders/ord-1:cancel", `{}`},
		{"GET", "/api/payments/pay-1", ""},
		{"POST", "/api/payments", `{"orderId":"ord-1"}`},
	}
	// want[role] lists the allowed calls by index; others are 403.
	want := map[string][]int{
		adminToken:  {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
		readerToken: {0, 1, 2, 6, 7, 8, 11},
		aliceToken:  {0, 1, 2, 7, 8, 9, 10},
		bobToken:    {0, 1, 2, 7, 8, 9, 10},
	}
	for _, token := range []string{"", "not-a-token", adminToken, readerToken, aliceToken, bobToken} {
		for i, c := range calls {
			t.Run(fmt.Sprintf("%s %s %s", token, c.method, c.path), func(t *testing.T) {
				wantStatus := 403
				switch {
				case token == "" || token == "not-a-token":
					wantStatus = 401
				case containsInt(want[token], i):
					wantStatus = 200
				}
				_, before := callsSoFar(h)
				r := h.do(c.method, c.path, token, c.body, "Idempotency-Key: k-"+fmt.Sprint(i))
				_, after := callsSoFar(h)
				switch {
				case wantStatus == 200 && r.status/100 != 2:
					t.Errorf("status = %d %s, want 2xx", r.status, r.body)
				case wantStatus != 200 && r.status != wantStatus:
					t.Errorf("status = %d %s, want %d", r.status, r.body, wantStatus)
				case wantStatus != 200 && after != before:
					t.Errorf("denied request reached an upstream")
				}
				if wantStatus == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", r.header.Get("WWW-Authenticate"))
				}
			})
		}
	}
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func callsSoFar(h *harness) (string, int) {
	_, a := h.inv.last()
	_, b := h.order.last()
	_, c := h.pay.last()
	return "", a + b + c
}

func TestAuthorizationHeaderForms(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	tests := []struct {
		name, header, wantChallenge string
		wantStatus                  int
	}{
		{"lower-case scheme", "bearer demo-read-token", "", 200},
		{"basic scheme", "Basic ZGVtbzpkZW1v", `Bearer realm="portico"`, 401},
		{"unknown token", "Bearer demo-nope-token", `Bearer realm="portico", error="invalid_token"`, 401},
		{"empty token", "Bearer ", `Bearer realm="portico"`, 401},
		{"token with space", "Bearer demo-read-token x", `Bearer realm="portico"`, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do("GET", "/api/inventory", "", "", "Authorization: "+tt.header)
			if r.status != tt.wantStatus || r.header.Get("WWW-Authenticate") != tt.wantChallenge {
				t.Errorf("GET with Authorization %q = %d, %q; want %d, %q", tt.header, r.status, r.header.Get("WWW-Authenticate"), tt.wantStatus, tt.wantChallenge)
			}
		})
	}
	r := h.do("GET", "/api/inventory", readerToken, "", "Authorization: Bearer demo-admin-token")
	if r.status != 400 || r.json(t)["code"] != "MALFORMED_CREDENTIALS" {
		t.Errorf("two Authorization headers = %d %s, want 400 MALFORMED_CREDENTIALS", r.status, r.body)
	}
}

// TestHeaderHygiene: nothing a client sends becomes upstream metadata
// unless the edge maps it, and nothing an upstream sends becomes a header
// but Idempotent-Replayed.
func TestHeaderHygiene(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.createOrder = func(ctx context.Context, _ *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
		_ = grpc.SetHeader(ctx, metadata.Pairs("x-portico-replayed", "true", "x-internal-host", "db-7"))
		_ = grpc.SetTrailer(ctx, metadata.Pairs("x-internal-cost", "12"))
		return &orderv1.Order{Id: "ord-1"}, nil
	}
	r := h.do("POST", "/api/orders", aliceToken, orderBody,
		"Idempotency-Key: key-1",
		"X-Trace-Id: trace-hygiene-1",
		"Grpc-Metadata-X-Portico-Subject: mallory",
		"Grpc-Metadata-Foo: bar",
		"X-Portico-Subject: mallory",
		"X-Portico-Role: admin",
		"X-Forwarded-For: 6.6.6.6",
		"X-Forwarded-Host: evil.example",
		"Forwarded: for=6.6.6.6",
		"Cookie: session=secret",
		"User-Agent: evil-agent",
		"TE: trailers",
	)
	if r.status != 201 {
		t.Fatalf("status = %d %s", r.status, r.body)
	}
	md, _ := h.order.last()
	allowed := map[string]bool{
		":authority": true, "content-type": true, "user-agent": true, "grpc-accept-encoding": true,
		"x-forwarded-host": true, "x-forwarded-for": true,
		"x-portico-subject": true, "x-portico-role": true, "idempotency-key": true, "x-trace-id": true,
		"traceparent": true, // derived by the edge from the trace id (package traceid)
	}
	for k, v := range md {
		if !allowed[k] {
			t.Errorf("upstream got metadata %s=%v", k, v)
		}
		for _, s := range v {
			if strings.Contains(s, "mallory") || strings.Contains(s, "6.6.6.6") || strings.Contains(s, "evil") || strings.Contains(s, "secret") {
				t.Errorf("client value reached the upstream: %s=%s", k, s)
			}
		}
	}
	wantMD := map[string]string{"x-portico-subject": "alice", "x-portico-role": "customer", "idempotency-key": "key-1", "x-trace-id": "trace-hygiene-1"}
	for k, v := range wantMD {
		if got := md.Get(k); len(got) != 1 || got[0] != v {
			t.Errorf("metadata %s = %v, want [%s]", k, got, v)
		}
	}
	if r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("Idempotent-Replayed = %q, want true", r.header.Get("Idempotent-Replayed"))
	}
	for k := range r.header {
		if strings.HasPrefix(k, "Grpc-") || strings.Contains(strings.ToLower(k), "internal") || k == "Trailer" {
			t.Errorf("upstream metadata leaked as header %s", k)
		}
	}
}

func TestAccessLogNeverHasSecrets(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	h.do("GET", "/api/orders/ord-1", adminToken, "", "Cookie: session=cookie-secret", "X-Trace-Id: trace-log-1")
	h.do("GET", "/api/orders/ord-1", "wrong-token-secret", "")
	logs := h.logs.String()
	for _, secret := range []string{adminToken, "cookie-secret", "wrong-token-secret"} {
		if strings.Contains(logs, secret) {
			t.Errorf("log contains %q:\n%s", secret, logs)
		}
	}
	lines := h.logs.lines(t, "request")
	if len(lines) != 2 {
		t.Fatalf("got %d access lines, want 2:\n%s", len(lines), logs)
	}
	l := lines[0]
	want := map[string]any{"service": "gateway", "traceId": "trace-log-1", "method": "GET", "path": "/api/orders/ord-1",
		"route": "/api/orders/{id}", "status": float64(200), "code": "", "upstream": "order", "level": "INFO"}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("access line %s = %v, want %v", k, l[k], v)
		}
	}
	for _, k := range []string{"time", "durationMs"} {
		if _, ok := l[k]; !ok {
			t.Errorf("access line has no %s", k)
		}
	}
	if lines[1]["code"] != "UNAUTHENTICATED" || lines[1]["status"] != float64(401) || lines[1]["route"] != "/api/orders/{id}" {
		t.Errorf("second line = %v, want a 401 UNAUTHENTICATED", lines[1])
	}
}
