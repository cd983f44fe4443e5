package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// TestEdgeErrors covers every problem the edge raises itself; none of them
// may reach an upstream.
func TestEdgeErrors(t *testing.T) {
	big := `{"paymentMethod":"` + strings.Repeat("x", 1<<20) + `"}`
	key := "Idempotency-Key: k-1"
	tests := []struct {
		name       string
		cfg        func(*config.Config)
		method     string
		path       string
		token      string
		body       string
		header     []string
		wantStatus int
		wantCode   string
		wantField  string
		wantAllow  string
		golden     bool
	}{
		{name: "no token", method: "GET", path: "/api/orders", wantStatus: 401, wantCode: "UNAUTHENTICATED", golden: true},
		{name: "unknown api path", method: "GET", path: "/api/nope", token: adminToken, wantStatus: 404, wantCode: "ROUTE_NOT_FOUND", golden: true},
		{name: "empty path variable", method: "GET", path: "/api/orders/", token: adminToken, wantStatus: 404, wantCode: "ROUTE_NOT_FOUND"},
		{name: "empty path variable on patch", method: "PATCH", path: "/api/inventory/", token: adminToken, body: `{}`, wantStatus: 404, wantCode: "ROUTE_NOT_FOUND"},
		{name: "headers too large", method: "GET", path: "/api/orders/ord-1", token: adminToken, header: []string{"X-Pad: " + strings.Repeat("p", config.DefaultMaxHeaderBytes)}, wantStatus: 431, wantCode: "REQUEST_HEADER_FIELDS_TOO_LARGE", golden: true},
		{name: "headers too large on ops", method: "GET", path: "/healthz/live", header: []string{"X-Pad: " + strings.Repeat("p", config.DefaultMaxHeaderBytes)}, wantStatus: 431, wantCode: "REQUEST_HEADER_FIELDS_TOO_LARGE"},
		{name: "unknown path outside api", method: "GET", path: "/favicon.ico", wantStatus: 404, wantCode: "ROUTE_NOT_FOUND"},
		{name: "wrong method", method: "DELETE", path: "/api/orders/ord-1", token: adminToken, wantStatus: 405, wantCode: "METHOD_NOT_ALLOWED", wantAllow: "GET, HEAD", golden: true},
		{name: "wrong method on collection", method: "PUT", path: "/api/orders", token: adminToken, wantStatus: 405, wantCode: "METHOD_NOT_ALLOWED", wantAllow: "GET, HEAD, POST"},
		{name: "wrong method on ops", method: "POST", path: "/health", wantStatus: 405, wantCode: "METHOD_NOT_ALLOWED", wantAllow: "GET, HEAD"},
		{name: "method override ignored", method: "POST", path: "/api/orders/ord-1", token: adminToken, header: []string{"X-HTTP-Method-Override: GET"}, wantStatus: 405, wantCode: "METHOD_NOT_ALLOWED", wantAllow: "GET, HEAD"},
		{name: "malformed json", method: "POST", path: "/api/orders", token: aliceToken, body: `{"lines":[`, header: []string{key}, wantStatus: 400, wantCode: "INVALID_JSON", golden: true},
		{name: "duplicate key", method: "POST", path: "/api/orders", token: aliceToken, body: `{"paymentMethod":"a","paymentMethod":"b"}`, header: []string{key}, wantStatus: 400, wantCode: "INVALID_JSON", wantField: "paymentMethod"},
		{name: "unknown field", method: "POST", path: "/api/orders", token: aliceToken, body: `{"lines":[{"sku":"a","qty":1}]}`, header: []string{key}, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "lines[0].qty", golden: true},
		{name: "wrong type", method: "POST", path: "/api/orders", token: aliceToken, body: `{"lines":[{"sku":"a","quantity":"two"}]}`, header: []string{key}, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "lines[0].quantity"},
		{name: "proto field name", method: "POST", path: "/api/orders", token: aliceToken, body: `{"payment_method":"pm"}`, header: []string{key}, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "payment_method"},
		{name: "int32 as string", method: "POST", path: "/api/orders", token: aliceToken, body: `{"lines":[{"sku":"a","quantity":"2"}]}`, header: []string{key}, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "lines[0].quantity"},
		{name: "int64 as number", method: "POST", path: "/api/inventory", token: adminToken, body: `{"sku":"a","name":"A","unitPrice":{"amountMinor":100,"currency":"USD"}}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "unitPrice.amountMinor"},
		{name: "null scalar", method: "POST", path: "/api/orders", token: aliceToken, body: `{"paymentMethod":null}`, header: []string{key}, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "paymentMethod"},
		{name: "out of range number", method: "POST", path: "/api/orders", token: aliceToken, body: `{"lines":[{"sku":"a","quantity":4294967296}]}`, header: []string{key}, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "lines[0].quantity"},
		{name: "fractional number", method: "POST", path: "/api/orders", token: aliceToken, body: `{"lines":[{"sku":"a","quantity":1.5}]}`, header: []string{key}, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "lines[0].quantity"},
		{name: "invalid utf-8 names its field", method: "POST", path: "/api/orders", token: aliceToken, body: "{\"paymentMethod\":\"\xc3\x28\"}", header: []string{key}, wantStatus: 400, wantCode: "INVALID_JSON", wantField: "paymentMethod"},
		{name: "body field route", method: "PATCH", path: "/api/inventory/a", token: adminToken, body: `{"name":7}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "name"},
		{name: "create item trailing json", method: "POST", path: "/api/inventory", token: adminToken, body: `{"sku":"kbd-1"} {"sku":"x"}`, wantStatus: 400, wantCode: "INVALID_JSON"},
		{name: "create item duplicate key", method: "POST", path: "/api/inventory", token: adminToken, body: `{"sku":"kbd-1","sku":"x"}`, wantStatus: 400, wantCode: "INVALID_JSON", wantField: "sku"},
		{name: "create item unknown field", method: "POST", path: "/api/inventory", token: adminToken, body: `{"sku":"kbd-1","unitPrice":{"amount":1}}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "unitPrice.amount"},
		{name: "create item too deep", method: "POST", path: "/api/inventory", token: adminToken, body: `{"sku":"kbd-1"` + strings.Repeat(`,"x":[`, 70) + strings.Repeat(`]`, 70) + `}`, wantStatus: 400, wantCode: "INVALID_JSON"},
		{name: "update item trailing json", method: "PATCH", path: "/api/inventory/kbd-1", token: adminToken, body: `{"name":"a"} {"name":"b"}`, wantStatus: 400, wantCode: "INVALID_JSON"},
		{name: "update item duplicate key", method: "PATCH", path: "/api/inventory/kbd-1", token: adminToken, body: `{"unitPrice":{"currency":"USD","currency":"EUR"}}`, wantStatus: 400, wantCode: "INVALID_JSON", wantField: "unitPrice.currency"},
		{name: "update item unknown field", method: "PATCH", path: "/api/inventory/kbd-1", token: adminToken, body: `{"stock":3}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "stock"},
		{name: "update without mask sets an output-only member", method: "PATCH", path: "/api/inventory/kbd-1", token: adminToken, body: `{"reserved":"1"}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "reserved"},
		{name: "update without mask sets the identifier", method: "PATCH", path: "/api/inventory/kbd-1", token: adminToken, body: `{"available":"3","sku":"other"}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "sku"},
		{name: "update without mask sets nothing", method: "PATCH", path: "/api/inventory/kbd-1", token: adminToken, body: ` { } `, wantStatus: 400, wantCode: "INVALID_ARGUMENT"},
		{name: "update without mask and no body", method: "PATCH", path: "/api/inventory/kbd-1", token: adminToken, wantStatus: 400, wantCode: "INVALID_ARGUMENT"},
		{name: "update without mask, cut short, names the syntax", method: "PATCH", path: "/api/inventory/kbd-1", token: adminToken, body: `{"sku":"x"`, wantStatus: 400, wantCode: "INVALID_JSON"},
		{name: "body sets a path field, cut short, names the syntax", method: "POST", path: "/api/orders/ord-1:cancel", token: adminToken, body: `{"id":"x"`, wantStatus: 400, wantCode: "INVALID_JSON"},
		{name: "body sets a path field after an unknown one: the unknown is named", method: "POST", path: "/api/orders/ord-1:cancel", token: adminToken, body: `{"nope":1,"id":"x"}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "nope"},
		{name: "update without mask sets nothing, then more JSON", method: "PATCH", path: "/api/inventory/kbd-1", token: adminToken, body: `{} {"name":"b"}`, wantStatus: 400, wantCode: "INVALID_JSON"},
		{name: "update item too deep", method: "PATCH", path: "/api/inventory/kbd-1", token: adminToken, body: strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70), wantStatus: 400, wantCode: "INVALID_JSON"},
		{name: "wrong content type", method: "POST", path: "/api/orders", token: aliceToken, body: orderBody, header: []string{key, "Content-Type: text/plain"}, wantStatus: 415, wantCode: "UNSUPPORTED_MEDIA_TYPE", golden: true},
		{name: "form post is not a get", method: "POST", path: "/api/inventory", token: adminToken, body: "sku=a", header: []string{"Content-Type: application/x-www-form-urlencoded"}, wantStatus: 415, wantCode: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "body over default limit", method: "POST", path: "/api/orders", token: aliceToken, body: big, header: []string{key}, wantStatus: 413, wantCode: "CONTENT_TOO_LARGE", golden: true},
		{name: "body over route limit", cfg: func(c *config.Config) {
			c.Routes.Overrides = map[string]config.RouteOverride{"POST /api/orders": {MaxBodyBytes: 64}}
		}, method: "POST", path: "/api/orders", token: aliceToken, body: orderBody, header: []string{key}, wantStatus: 413, wantCode: "CONTENT_TOO_LARGE"},
		{name: "idempotency key missing", method: "POST", path: "/api/orders", token: aliceToken, body: orderBody, wantStatus: 400, wantCode: "IDEMPOTENCY_KEY_MISSING", golden: true},
		{name: "idempotency key empty", method: "POST", path: "/api/orders", token: aliceToken, body: orderBody, header: []string{"Idempotency-Key: "}, wantStatus: 400, wantCode: "IDEMPOTENCY_KEY_INVALID"},
		{name: "idempotency key too long", method: "POST", path: "/api/orders", token: aliceToken, body: orderBody, header: []string{"Idempotency-Key: " + strings.Repeat("k", 256)}, wantStatus: 400, wantCode: "IDEMPOTENCY_KEY_INVALID"},
		{name: "idempotency key not printable", method: "POST", path: "/api/orders", token: aliceToken, body: orderBody, header: []string{"Idempotency-Key: a\tb"}, wantStatus: 400, wantCode: "IDEMPOTENCY_KEY_INVALID"},
		{name: "idempotency key not ascii", method: "POST", path: "/api/orders", token: aliceToken, body: orderBody, header: []string{"Idempotency-Key: ключ"}, wantStatus: 400, wantCode: "IDEMPOTENCY_KEY_INVALID"},
		{name: "idempotency key twice", method: "POST", path: "/api/orders", token: aliceToken, body: orderBody, header: []string{key, "Idempotency-Key: k-2"}, wantStatus: 400, wantCode: "IDEMPOTENCY_KEY_INVALID"},
		{name: "malformed timeout", method: "GET", path: "/api/orders/ord-1", token: adminToken, header: []string{"Grpc-Timeout: 1s"}, wantStatus: 400, wantCode: "INVALID_TIMEOUT", golden: true},
		{name: "timeout with nine digits", method: "GET", path: "/api/orders/ord-1", token: adminToken, header: []string{"Grpc-Timeout: 123456789S"}, wantStatus: 400, wantCode: "INVALID_TIMEOUT"},
		{name: "zero timeout", method: "GET", path: "/api/orders/ord-1", token: adminToken, header: []string{"Grpc-Timeout: 0S"}, wantStatus: 400, wantCode: "INVALID_TIMEOUT"},
		{name: "bad query value", method: "GET", path: "/api/inventory?pageSize=ten", token: adminToken, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "pageSize", golden: true},
		{name: "query value out of range", method: "GET", path: "/api/inventory?pageSize=99999999999", token: adminToken, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "pageSize"},
		{name: "unknown query parameter", method: "GET", path: "/api/inventory?colour=red", token: adminToken, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "colour"},
		{name: "query sets a path field", method: "GET", path: "/api/orders/ord-1?id=ord-2", token: adminToken, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "id"},
		{name: "body sets a path field", method: "POST", path: "/api/orders/ord-1:cancel", token: adminToken, body: `{"id":"ord-2"}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "id"},
		{name: "body sets a path field, escaped", method: "POST", path: "/api/payments/pay-1:refund", token: adminToken, body: `{"\u0069d":"` + strings.Repeat("x", 100000) + `"}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "id"},
		{name: "repeated singular query", method: "GET", path: "/api/inventory?pageSize=1&pageSize=2", token: adminToken, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "pageSize"},
		{name: "query not utf-8", method: "PATCH", path: "/api/inventory/a?updateMask=%FF", token: adminToken, body: `{}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "updateMask"},
		{name: "mask proto name", method: "PATCH", path: "/api/inventory/a?updateMask=unit_price", token: adminToken, body: `{}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "updateMask"},
		{name: "mask nested path", method: "PATCH", path: "/api/inventory/a?updateMask=unitPrice.currency", token: adminToken, body: `{}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "updateMask"},
		{name: "mask unknown member", method: "PATCH", path: "/api/inventory/a?updateMask=colour", token: adminToken, body: `{}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "updateMask"},
		{name: "mask empty path", method: "PATCH", path: "/api/inventory/a?updateMask=name,", token: adminToken, body: `{}`, wantStatus: 400, wantCode: "INVALID_ARGUMENT", wantField: "updateMask"},
		{name: "path not utf-8", method: "GET", path: "/api/orders/%FF", token: adminToken, wantStatus: 400, wantCode: "INVALID_ARGUMENT"},
		{name: "malformed query", method: "GET", path: "/api/inventory?pageSize=%zz", token: adminToken, wantStatus: 400, wantCode: "INVALID_ARGUMENT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{cfg: tt.cfg})
			r := h.do(tt.method, tt.path, tt.token, tt.body, tt.header...)
			checkProblem(t, r, tt.wantStatus, tt.wantCode)
			if tt.wantAllow != "" && r.header.Get("Allow") != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", r.header.Get("Allow"), tt.wantAllow)
			}
			if tt.wantField != "" {
				errs, _ := r.json(t)["errors"].([]any)
				if len(errs) != 1 || errs[0].(map[string]any)["field"] != tt.wantField {
					t.Errorf("errors = %v, want one naming %s", errs, tt.wantField)
				}
			}
			for _, internal := range []string{"proto:", "strconv", "grpc-gateway", "runtime.", "json:"} {
				if strings.Contains(string(r.body), internal) {
					t.Errorf("problem quotes internals (%q): %s", internal, r.body)
				}
			}
			if _, n := h.order.last(); n > 0 {
				t.Errorf("the order upstream was called %d times", n)
			}
			if _, n := h.inv.last(); n > 0 {
				t.Errorf("the inventory upstream was called %d times", n)
			}
			if tt.golden {
				golden(t, "problems/edge-"+strings.ReplaceAll(tt.name, " ", "-"), r.body)
			}
		})
	}
}

// TestAcceptedInputs are inputs the strict checks must still let through.
func TestAcceptedInputs(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.createOrder = func(_ context.Context, r *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
		return &orderv1.Order{Id: "ord-1"}, nil
	}
	h.inv.listItems = func(_ context.Context, r *inventoryv1.ListItemsRequest) (*inventoryv1.ListItemsResponse, error) {
		return &inventoryv1.ListItemsResponse{NextPageToken: r.PageToken}, nil
	}
	h.inv.updateItem = func(_ context.Context, r *inventoryv1.UpdateItemRequest) (*inventoryv1.Item, error) {
		return r.Item, nil
	}
	tests := []struct {
		name, method, path, body string
		header                   []string
	}{
		{"charset utf-8", "POST", "/api/orders", orderBody, []string{"Idempotency-Key: a", "Content-Type: application/json; charset=UTF-8"}},
		{"empty body", "POST", "/api/orders", "", []string{"Idempotency-Key: d"}},
		{"query by json names", "GET", "/api/inventory?pageSize=2&pageToken=x", "", nil},
		{"query field mask", "PATCH", "/api/inventory/a?updateMask=name", `{"name":"x"}`, nil},
		{"head", "HEAD", "/api/inventory", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(tt.method, tt.path, adminToken, tt.body, tt.header...)
			if r.status/100 != 2 {
				t.Errorf("%s %s = %d %s, want 2xx", tt.method, tt.path, r.status, r.body)
			}
		})
	}
}

// TestQueryProtoNames: the query takes the JSON (lowerCamel) names the
// OpenAPI document lists, nothing else; a proto name is 400 naming the
// parameter and the right spelling.
func TestQueryProtoNames(t *testing.T) {
	h := newHarness(t, setup{})
	tests := []struct {
		method, path, body, param, want string
	}{
		{"GET", "/api/inventory?page_size=2", "", "page_size", "pageSize"},
		{"GET", "/api/inventory?pageSize=2&page_token=x", "", "page_token", "pageToken"},
		{"PATCH", "/api/inventory/a?update_mask=name", `{"name":"x"}`, "update_mask", "updateMask"},
	}
	for _, tt := range tests {
		r := h.do(tt.method, tt.path, adminToken, tt.body)
		checkProblem(t, r, 400, "INVALID_ARGUMENT")
		m := r.json(t)
		errs, _ := m["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["field"] != tt.param {
			t.Errorf("%s %s: errors = %v, want one naming %s", tt.method, tt.path, errs, tt.param)
		}
		if detail, _ := m["detail"].(string); !strings.Contains(detail, tt.param) || !strings.Contains(detail, "use "+tt.want) {
			t.Errorf("%s %s: detail = %q, want it to name %s and say use %s", tt.method, tt.path, detail, tt.param, tt.want)
		}
	}
	if _, n := h.inv.last(); n > 0 {
		t.Errorf("the inventory upstream was called %d times", n)
	}
}
