package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

const orderBody = `{"lines":[{"sku":"keyboard-001","quantity":2}],"paymentMethod":"pm_card_ok"}`

// failing returns an interceptor that answers every call with err without
// calling the upstream, as the resilience chain's fast failures do.
func failing(err error) grpc.UnaryClientInterceptor {
	return func(context.Context, string, any, any, *grpc.ClientConn, grpc.UnaryInvoker, ...grpc.CallOption) error {
		return err
	}
}

func getOrderFails(err error) func(*harness) {
	return func(h *harness) {
		h.order.getOrder = func(context.Context, *orderv1.GetOrderRequest) (*orderv1.Order, error) { return nil, err }
	}
}

func createOrderFails(err error) func(*harness) {
	return func(h *harness) {
		h.order.createOrder = func(context.Context, *orderv1.CreateOrderRequest) (*orderv1.Order, error) { return nil, err }
	}
}

func withQuota(err error) error {
	st, _ := status.FromError(err)
	st, _ = st.WithDetails(&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{Subject: "alice"}}})
	return st.Err()
}

// errorCase is one row of the status table, reached through real gRPC.
type errorCase struct {
	name       string
	su         setup
	stub       func(*harness)
	method     string
	path       string
	body       string
	header     []string
	wantStatus int
	wantCode   string
	wantHeader map[string]string
	golden     bool
}

func errorCases() []errorCase {
	create := "/api/orders"
	key := []string{"Idempotency-Key: k-1"}
	violations := rpcerr.Violations{{Field: "lines[0].quantity", Description: "must be 1-1000"}, {Field: "payment_method", Description: "is required"}}
	return []errorCase{
		{name: "invalid argument", stub: createOrderFails(violations.Err()), method: "POST", path: create, body: orderBody, header: key, wantStatus: 400, wantCode: "INVALID_ARGUMENT", golden: true},
		{name: "out of range", stub: getOrderFails(status.Error(codes.OutOfRange, "page token expired")), wantStatus: 400, wantCode: "OUT_OF_RANGE"},
		{name: "unauthenticated", stub: getOrderFails(rpcerr.New(codes.Unauthenticated, "order.portico.dev", "UNAUTHENTICATED_CALLER", "no caller")), wantStatus: 401, wantCode: "UNAUTHENTICATED_CALLER", wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="portico"`}},
		{name: "permission denied", stub: getOrderFails(status.Error(codes.PermissionDenied, "not yours")), wantStatus: 403, wantCode: "PERMISSION_DENIED"},
		{name: "not found", stub: getOrderFails(rpcerr.New(codes.NotFound, "order.portico.dev", "ORDER_NOT_FOUND", "order ord-1 not found")), wantStatus: 404, wantCode: "ORDER_NOT_FOUND", golden: true},
		{name: "already exists", stub: func(h *harness) {
			h.inv.createItem = func(context.Context, *inventoryv1.CreateItemRequest) (*inventoryv1.Item, error) {
				return nil, rpcerr.New(codes.AlreadyExists, "inventory.portico.dev", "ITEM_ALREADY_EXISTS", "sku taken")
			}
		}, method: "POST", path: "/api/inventory", body: `{"sku":"a"}`, wantStatus: 409, wantCode: "ITEM_ALREADY_EXISTS"},
		{name: "aborted", stub: getOrderFails(status.Error(codes.Aborted, "concurrent update")), wantStatus: 409, wantCode: "ABORTED"},
		{name: "insufficient stock", stub: createOrderFails(rpcerr.New(codes.FailedPrecondition, "inventory.portico.dev", "INSUFFICIENT_STOCK", "only 1 left")), method: "POST", path: create, body: orderBody, header: key, wantStatus: 409, wantCode: "INSUFFICIENT_STOCK"},
		{name: "payment declined", stub: createOrderFails(rpcerr.New(codes.FailedPrecondition, "payment.portico.dev", "PAYMENT_DECLINED", "card declined")), method: "POST", path: create, body: orderBody, header: key, wantStatus: 422, wantCode: "PAYMENT_DECLINED"},
		{name: "idempotency key reused", stub: createOrderFails(rpcerr.New(codes.FailedPrecondition, "order.portico.dev", "IDEMPOTENCY_KEY_REUSED", "key k-1 was used for another request")), method: "POST", path: create, body: orderBody, header: key, wantStatus: 422, wantCode: "IDEMPOTENCY_KEY_REUSED", golden: true},
		{name: "other failed precondition", stub: func(h *harness) {
			h.order.cancelOrder = func(context.Context, *orderv1.CancelOrderRequest) (*orderv1.Order, error) {
				return nil, rpcerr.New(codes.FailedPrecondition, "order.portico.dev", "ORDER_NOT_CANCELLABLE", "already failed")
			}
		}, method: "POST", path: "/api/orders/ord-1:cancel", body: `{}`, wantStatus: 409, wantCode: "ORDER_NOT_CANCELLABLE"},
		{name: "resource exhausted", stub: getOrderFails(rpcerr.WithRetryInfo(withQuota(status.Error(codes.ResourceExhausted, "quota")), 2500*time.Millisecond)), wantStatus: 429, wantCode: "RESOURCE_EXHAUSTED", wantHeader: map[string]string{"Retry-After": "3"}},
		{name: "response too large", stub: func(h *harness) {
			h.inv.getItem = func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
				return &inventoryv1.Item{Sku: "big", Name: strings.Repeat("x", 5<<20)}, nil
			}
		}, path: "/api/inventory/big", wantStatus: 503, wantCode: "MESSAGE_TOO_LARGE", wantHeader: map[string]string{"Retry-After": ""}},
		// What an upstream's grpc-go answers (trailers only, no details)
		// when its own response passes its send limit.
		{name: "upstream response too large", stub: getOrderFails(status.Error(codes.ResourceExhausted, "grpc: trying to send message larger than max (6791355 vs. 4194304)")),
			wantStatus: 503, wantCode: "MESSAGE_TOO_LARGE", wantHeader: map[string]string{"Retry-After": ""}, golden: true},
		{name: "resource exhausted without quota details", stub: getOrderFails(rpcerr.New(codes.ResourceExhausted, "order.portico.dev", "TOO_BIG", "grpc: received message larger than max (5 vs. 4)")),
			wantStatus: 503, wantCode: "MESSAGE_TOO_LARGE", wantHeader: map[string]string{"Retry-After": ""}},
		{name: "quota without retry info", stub: getOrderFails(withQuota(status.Error(codes.ResourceExhausted, "quota"))), wantStatus: 429, wantCode: "RESOURCE_EXHAUSTED", wantHeader: map[string]string{"Retry-After": "1"}},
		{name: "cancelled", stub: getOrderFails(status.Error(codes.Canceled, "caller went away")), wantStatus: 499, wantCode: "CLIENT_CLOSED_REQUEST"},
		{name: "unimplemented", path: "/api/payments/pay-1", wantStatus: 501, wantCode: "NOT_IMPLEMENTED"},
		{name: "upstream deadline with hop", stub: createOrderFails(rpcerr.New(codes.DeadlineExceeded, "resilience.portico.dev", "UPSTREAM_TIMEOUT", "payment timed out", "hop", "payment")), method: "POST", path: create, body: orderBody, header: key, wantStatus: 504, wantCode: "UPSTREAM_TIMEOUT", golden: true},
		{name: "edge deadline", su: setup{cfg: func(c *config.Config) {
			c.Routes.Overrides = map[string]config.RouteOverride{"GET /api/orders/{id}": {Timeout: 50 * time.Millisecond}}
		}}, stub: func(h *harness) {
			h.order.getOrder = func(ctx context.Context, _ *orderv1.GetOrderRequest) (*orderv1.Order, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}
		}, wantStatus: 504, wantCode: "UPSTREAM_TIMEOUT", golden: true},
		{name: "circuit open", su: setup{chain: map[string]grpc.UnaryClientInterceptor{"order": failing(rpcerr.WithRetryInfo(
			rpcerr.New(codes.Unavailable, "resilience.portico.dev", "CIRCUIT_OPEN", "breaker open", "upstream", "order", "retryAfterMs", "1500"), 1500*time.Millisecond))}},
			wantStatus: 503, wantCode: "CIRCUIT_OPEN", wantHeader: map[string]string{"Retry-After": "2"}, golden: true},
		{name: "circuit open without retry info", su: setup{chain: map[string]grpc.UnaryClientInterceptor{"order": failing(
			rpcerr.New(codes.Unavailable, "resilience.portico.dev", "CIRCUIT_OPEN", "breaker open", "upstream", "order", "retryAfterMs", "800"))}},
			wantStatus: 503, wantCode: "CIRCUIT_OPEN", wantHeader: map[string]string{"Retry-After": "1"}},
		{name: "overloaded", su: setup{chain: map[string]grpc.UnaryClientInterceptor{"order": failing(rpcerr.WithRetryInfo(
			rpcerr.New(codes.Unavailable, "resilience.portico.dev", "OVERLOADED", "bulkhead full"), time.Second))}},
			wantStatus: 503, wantCode: "OVERLOADED", wantHeader: map[string]string{"Retry-After": "1"}},
		{name: "service unavailable", stub: getOrderFails(status.Error(codes.Unavailable, "database is restarting")), wantStatus: 503, wantCode: "SERVICE_UNAVAILABLE", wantHeader: map[string]string{"Retry-After": "1"}, golden: true},
		{name: "unavailable with reason", stub: createOrderFails(rpcerr.New(codes.Unavailable, "order.portico.dev", "INVENTORY_UNAVAILABLE", "inventory down")), method: "POST", path: create, body: orderBody, header: key, wantStatus: 503, wantCode: "INVENTORY_UNAVAILABLE", wantHeader: map[string]string{"Retry-After": "1"}},
		{name: "upstream unreachable", su: setup{down: []string{"order"}}, wantStatus: 502, wantCode: "UPSTREAM_UNAVAILABLE", golden: true},
		{name: "internal", stub: getOrderFails(status.Error(codes.Internal, "nil pointer at store.go:42")), wantStatus: 500, wantCode: "INTERNAL", golden: true},
		{name: "unknown", stub: getOrderFails(status.Error(codes.Unknown, "panic: boom")), wantStatus: 500, wantCode: "INTERNAL"},
		{name: "data loss", stub: getOrderFails(status.Error(codes.DataLoss, "torn page")), wantStatus: 500, wantCode: "INTERNAL"},
		{name: "payment refund unimplemented", path: "/api/payments/pay-1:refund", method: "POST", body: `{}`, wantStatus: 501, wantCode: "NOT_IMPLEMENTED"},
	}
}

func TestStatusTable(t *testing.T) {
	for _, tt := range errorCases() {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.su)
			if tt.stub != nil {
				tt.stub(h)
			}
			method, path := tt.method, tt.path
			if method == "" {
				method = http.MethodGet
			}
			if path == "" {
				path = "/api/orders/ord-1"
			}
			r := h.do(method, path, adminToken, tt.body, tt.header...)
			checkProblem(t, r, tt.wantStatus, tt.wantCode)
			for k, v := range tt.wantHeader {
				if got := r.header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if (tt.wantStatus == 503 && tt.wantCode != "MESSAGE_TOO_LARGE" || tt.wantStatus == 429) && r.header.Get("Retry-After") == "" {
				t.Errorf("%d without Retry-After", tt.wantStatus)
			}
			if tt.wantStatus >= 500 && (strings.Contains(string(r.body), "store.go") || strings.Contains(string(r.body), "larger than max")) {
				t.Errorf("5xx body leaks the upstream message: %s", r.body)
			}
			if tt.golden {
				golden(t, "problems/status-"+strings.ReplaceAll(tt.name, " ", "-"), r.body)
			}
		})
	}
}

// checkProblem asserts an RFC 9457 answer with status and code.
func checkProblem(t *testing.T, r response, wantStatus int, wantCode string) {
	t.Helper()
	if r.status != wantStatus {
		t.Fatalf("status = %d, want %d; body %s", r.status, wantStatus, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	p := r.json(t)
	if p["code"] != wantCode {
		t.Errorf("code = %v, want %s; body %s", p["code"], wantCode, r.body)
	}
	if p["status"] != float64(wantStatus) || p["type"] == "" || p["title"] == "" || p["instance"] == "" {
		t.Errorf("problem members missing or wrong: %s", r.body)
	}
	if tid := r.header.Get("X-Trace-Id"); tid == "" || p["traceId"] != tid {
		t.Errorf("traceId = %v, X-Trace-Id = %q; want equal and set", p["traceId"], tid)
	}
}

func TestInternalErrorIsLoggedNotSent(t *testing.T) {
	h := newHarness(t, setup{})
	getOrderFails(status.Error(codes.Internal, "nil pointer at store.go:42"))(h)
	r := h.do("GET", "/api/orders/ord-1", adminToken, "")
	checkProblem(t, r, 500, "INTERNAL")
	lines := h.logs.lines(t, "request")
	if len(lines) != 1 || !strings.Contains(lines[0]["error"].(string), "store.go:42") {
		t.Errorf("access line = %v, want the upstream message in error", lines)
	}
}

func TestUpstreamErrorMetric(t *testing.T) {
	h := newHarness(t, setup{})
	getOrderFails(status.Error(codes.Unavailable, "down"))(h)
	h.do("GET", "/api/orders/ord-1", adminToken, "")
	m := h.do("GET", "/metrics", adminToken, "")
	want := `portico_gateway_upstream_errors_total{grpc_code="Unavailable",upstream="order"} 1`
	if !strings.Contains(string(m.body), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}
