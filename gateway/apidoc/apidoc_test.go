package apidoc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/problem"
	_ "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	_ "github.com/portico-gateway/portico/gen/portico/order/v1"
	_ "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

const generated = "../../gen/openapi/gnostic/openapi.yaml"

func build(t *testing.T) (map[string]any, []byte) {
	t.Helper()
	in, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Build(in, protoregistry.GlobalFiles, Defaults)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	return doc, out
}

func at(v any, path ...string) any {
	for _, p := range path {
		switch t := v.(type) {
		case map[string]any:
			v = t[p]
		case []any:
			i := 0
			for _, c := range p {
				i = i*10 + int(c-'0')
			}
			if i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

func TestBuild(t *testing.T) {
	doc, out := build(t)
	if err := Validate(out); err != nil {
		t.Fatal(err)
	}
	order := []string{"paths", "/api/orders", "post"}
	op := func(p ...string) []string { return append(slices.Clone(order), p...) }
	tests := []struct {
		name string
		path []string
		want any
	}{
		{"version", []string{"openapi"}, "3.0.3"},
		{"license", []string{"info", "license", "name"}, "Apache-2.0"},
		{"operationId", op("operationId"), "createOrder"},
		{"summary", op("summary"), "Place an order"},
		{"tag", op("tags", "0"), "Orders"},
		{"201 json only", op("responses", "201", "content", "application/json", "schema", "$ref"), "#/components/schemas/Order"},
		{"201 location", op("responses", "201", "headers", "Location", "$ref"), "#/components/headers/Location"},
		{"201 replayed", op("responses", "201", "headers", "Idempotent-Replayed", "$ref"), "#/components/headers/IdempotentReplayed"},
		{"201 trace id", op("responses", "201", "headers", "X-Trace-Id", "$ref"), "#/components/headers/XTraceId"},
		{"no 200 on create", op("responses", "200"), nil},
		{"no default", op("responses", "default"), nil},
		{"422", op("responses", "422", "$ref"), "#/components/responses/UnprocessableEntity"},
		{"idempotency key", op("parameters", "2", "$ref"), "#/components/parameters/IdempotencyKey"},
		{"get 200", []string{"paths", "/api/orders/{id}", "get", "responses", "200", "description"}, "OK"},
		{"no 404 on list", []string{"paths", "/api/orders", "get", "responses", "404"}, nil},
		{"no 409 on get", []string{"paths", "/api/orders/{id}", "get", "responses", "409"}, nil},
		{"merged path", []string{"paths", "/api/inventory/{item.sku}"}, nil},
		{"patch moved", []string{"paths", "/api/inventory/{sku}", "patch", "parameters", "0", "name"}, "sku"},
		{"patch body has its own schema", []string{"paths", "/api/inventory/{sku}", "patch", "requestBody", "content", "application/json", "schema", "$ref"}, "#/components/schemas/ItemUpdate"},
		{"patch schema requires nothing", []string{"components", "schemas", "ItemUpdate", "required"}, nil},
		{"create body has the input schema", []string{"paths", "/api/inventory", "post", "requestBody", "content", "application/json", "schema", "$ref"}, "#/components/schemas/ItemInput"},
		{"create requires the name", []string{"components", "schemas", "ItemInput", "required", "0"}, "name"},
		{"create still requires the sku", []string{"components", "schemas", "ItemInput", "required", "1"}, "sku"},
		{"create requires the price", []string{"components", "schemas", "ItemInput", "required", "2"}, "unitPrice"},
		{"create requires no more", []string{"components", "schemas", "ItemInput", "required", "3"}, nil},
		{"a request is closed", []string{"components", "schemas", "ItemInput", "additionalProperties"}, false},
		{"a request's money is closed too", []string{"components", "schemas", "MoneyInput", "additionalProperties"}, false},
		{"an input refers to inputs", []string{"components", "schemas", "ItemInput", "properties", "unitPrice", "allOf", "0", "$ref"}, "#/components/schemas/MoneyInput"},
		{"an order's lines are inputs", []string{"components", "schemas", "CreateOrderRequest", "properties", "lines", "items", "$ref"}, "#/components/schemas/OrderLineInput"},
		{"a response is open", []string{"components", "schemas", "Item", "additionalProperties"}, nil},
		{"a response requires what is always written", []string{"components", "schemas", "Item", "required", "0"}, "available"},
		{"a response's null total is required", []string{"components", "schemas", "Order", "required", "10"}, "total"},
		{"a response's etag is required", []string{"components", "schemas", "Order", "required", "2"}, "etag"},
		{"a GET answers ETag", []string{"paths", "/api/orders/{id}", "get", "responses", "200", "headers", "ETag", "$ref"}, "#/components/headers/ETag"},
		{"a list answers ETag", []string{"paths", "/api/orders", "get", "responses", "200", "headers", "ETag", "$ref"}, "#/components/headers/ETag"},
		{"a GET answers 304", []string{"paths", "/api/orders/{id}", "get", "responses", "304", "headers", "ETag", "$ref"}, "#/components/headers/ETag"},
		{"a GET takes If-None-Match", []string{"paths", "/api/orders/{id}", "get", "parameters", "4", "$ref"}, "#/components/parameters/IfNoneMatch"},
		{"a change with an etag takes If-Match", []string{"paths", "/api/orders/{id}:cancel", "post", "parameters", "3", "$ref"}, "#/components/parameters/IfMatch"},
		{"a change with an etag answers 412", []string{"paths", "/api/orders/{id}:cancel", "post", "responses", "412", "$ref"}, "#/components/responses/PreconditionFailed"},
		{"a change without an etag takes no If-Match", []string{"paths", "/api/reservations/{id}:commit", "post", "parameters", "3"}, nil},
		{"a change answers no 304", []string{"paths", "/api/orders/{id}:cancel", "post", "responses", "304"}, nil},
		{"a stream answers no 304", []string{"paths", "/api/orders/{id}:watch", "get", "responses", "304"}, nil},
		{"a stream answers no 412", []string{"paths", "/api/orders/{id}:watch", "get", "responses", "412"}, nil},
		{"a stream answers no ETag", []string{"paths", "/api/orders/{id}:watch", "get", "responses", "200", "headers", "ETag"}, nil},
		{"an export answers no 304", []string{"paths", "/api/orders:export", "get", "responses", "304"}, nil},
		{"an export answers no 412", []string{"paths", "/api/orders:export", "get", "responses", "412"}, nil},
		{"an export answers no ETag", []string{"paths", "/api/orders:export", "get", "responses", "200", "headers", "ETag"}, nil},
		{"a response's money is complete", []string{"components", "schemas", "Money", "required", "0"}, "amountMinor"},
		{"a required name is not empty", []string{"components", "schemas", "ItemInput", "properties", "name", "minLength"}, 1.0},
		{"patch body leaves the path's sku out", []string{"components", "schemas", "ItemUpdate", "properties", "sku"}, nil},
		{"patch body is closed", []string{"components", "schemas", "ItemUpdate", "additionalProperties"}, false},
		{"create body keeps the sku", []string{"components", "schemas", "ItemInput", "properties", "sku", "type"}, "string"},
		{"413 where there is a body", op("responses", "413", "$ref"), "#/components/responses/RequestEntityTooLarge"},
		{"415 where there is a body", op("responses", "415", "$ref"), "#/components/responses/UnsupportedMediaType"},
		{"no 413 without a body", []string{"paths", "/api/orders/{id}", "get", "responses", "413"}, nil},
		{"a query parameter the rules require", []string{"paths", "/api/payments", "get", "parameters", "0", "required"}, true},
		{"an unset message is null", []string{"components", "schemas", "Order", "properties", "total", "nullable"}, true},
		{"a null total is still Money", []string{"components", "schemas", "Order", "properties", "total", "allOf", "0", "$ref"}, "#/components/schemas/Money"},
		{"a required message is not nullable", []string{"components", "schemas", "CreatePaymentRequest", "properties", "amount", "nullable"}, nil},
		{"cancel body leaves the path's id out", []string{"components", "schemas", "CancelOrderRequest", "properties", "id"}, nil},
		{"list page renamed for clients", []string{"paths", "/api/orders", "get", "responses", "200", "content", "application/json", "schema", "$ref"}, "#/components/schemas/OrdersPage"},
		{"no schema named like a client wrapper", []string{"components", "schemas", "ListOrdersResponse"}, nil},
		{"path param rule", []string{"paths", "/api/orders/{id}", "get", "parameters", "0", "schema", "maxLength"}, 64.0},
		{"schema name", []string{"components", "schemas", "Order", "type"}, "object"},
		{"enum short", []string{"components", "schemas", "Order", "properties", "status", "enum", "2"}, "CONFIRMED"},
		{"minItems", []string{"components", "schemas", "CreateOrderRequest", "properties", "lines", "minItems"}, 1.0},
		{"problem media", []string{"components", "responses", "NotFound", "content", "application/problem+json", "schema", "$ref"}, "#/components/schemas/Problem"},
		{"problem json absent", []string{"components", "responses", "NotFound", "content", "application/json"}, nil},
		{"retry after 503", []string{"components", "responses", "ServiceUnavailable", "headers", "Retry-After", "$ref"}, "#/components/headers/RetryAfter"},
		{"retry after 429", []string{"components", "responses", "TooManyRequests", "headers", "Retry-After", "$ref"}, "#/components/headers/RetryAfter"},
		{"challenge on 401", []string{"components", "responses", "Unauthorized", "headers", "WWW-Authenticate", "$ref"}, "#/components/headers/WWWAuthenticate"},
		{"no retry after 504", []string{"components", "responses", "GatewayTimeout", "headers", "Retry-After"}, nil},
		{"bearer", []string{"components", "securitySchemes", "bearer", "scheme"}, "bearer"},
		{"signed app scheme", []string{"components", "securitySchemes", "signedApp", "name"}, "X-Signature"},
		{"roles of createOrder", []string{"paths", "/api/orders", "post", "x-portico-roles", "1"}, "customer"},
		{"roles of createItem", []string{"paths", "/api/inventory", "post", "x-portico-roles", "0"}, "admin"},
		{"createItem is admin only", []string{"paths", "/api/inventory", "post", "x-portico-roles", "1"}, nil},
		{"roles of getPayment", []string{"paths", "/api/payments/{id}", "get", "x-portico-roles", "1"}, "reader"},
	}
	for _, tt := range tests {
		if got := at(doc, tt.path...); got != tt.want {
			t.Errorf("%s: %v = %v, want %v", tt.name, tt.path, got, tt.want)
		}
	}
	if sec, _ := at(doc, "paths", "/api/orders", "post", "security").([]any); len(sec) != 2 {
		t.Errorf("createOrder's security = %v, want bearer or signedApp", sec)
	}
	codes, _ := at(doc, "components", "schemas", "Problem", "properties", "code", "enum").([]any)
	var got []string
	for _, c := range codes {
		got = append(got, c.(string))
	}
	if !slices.Equal(got, problem.Codes()) {
		t.Errorf("Problem.code enum = %v, want problem.Codes()", got)
	}
	if strings.Contains(string(out), `\n `) && !strings.Contains(string(out), `\n  pm_card_ok`) {
		t.Errorf("a description keeps the comment's leading space on a continuation line")
	}
	if d, _ := at(doc, "paths", "/api/inventory/{sku}", "patch", "description").(string); !strings.Contains(d, "only the fields sent in the body change") || !strings.Contains(d, "set to its zero value") {
		t.Errorf("PATCH description = %q, want the REST note on the derived and the explicit mask", d)
	}
	for _, v := range []string{"OrderService_", "STATUS_CONFIRMED", "v1Order", "google.rpc.Status", "x-portico-replayed"} {
		if strings.Contains(string(out), v) {
			t.Errorf("document still names %s", v)
		}
	}
}

// TestEveryOperation: every operation declares its success status with
// application/json only (a stream: its two framings, or an export's media
// types), X-Trace-Id, and a problem response for each status of Common.
func TestEveryOperation(t *testing.T) {
	doc, _ := build(t)
	for path, item := range doc["paths"].(map[string]any) {
		for method, o := range item.(map[string]any) {
			resp := at(o, "responses").(map[string]any)
			ok := resp["200"]
			if ok == nil {
				ok = resp["201"]
			}
			c, _ := at(ok, "content").(map[string]any)
			switch {
			case c["application/x-ndjson"] != nil && (c["text/event-stream"] != nil || c["text/csv"] != nil) && len(c) == 2:
			case len(c) != 1 || c["application/json"] == nil:
				t.Errorf("%s %s: success content = %v, want application/json only", method, path, c)
			}
			if at(ok, "headers", "X-Trace-Id") == nil {
				t.Errorf("%s %s: success has no X-Trace-Id", method, path)
			}
			for _, s := range Common {
				if path == auth.TicketsPath && (s == http.StatusBadGateway || s == http.StatusGatewayTimeout) {
					continue // the edge's own operation calls no upstream
				}
				if resp[itoa(s)] == nil {
					t.Errorf("%s %s: no %d", method, path, s)
				}
			}
			if s, _ := at(o, "summary").(string); s == "" || strings.Contains(s, "\n") {
				t.Errorf("%s %s: summary %q, want one line", method, path, s)
			}
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestGenerated: gen/openapi/openapi.json is what Build makes now (make
// check-generated checks the same from a fresh buf generate).
func TestGenerated(t *testing.T) {
	_, out := build(t)
	served, err := os.ReadFile("../../gen/openapi/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, served) {
		t.Errorf("gen/openapi/openapi.json is stale: run make generate")
	}
}

func TestBuildRejects(t *testing.T) {
	for name, in := range map[string]string{
		"not a document":  "{",
		"swagger 2":       `{"swagger":"2.0","info":{"title":"x","version":"1"},"paths":{}}`,
		"no paths":        `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{}}`,
		"unknown rpc":     `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{"/x":{"get":{"operationId":"NoService_Nothing","responses":{"200":{"description":"OK"}}}}}}`,
		"bad operationId": `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{"/x":{"get":{"operationId":"nounderscore","responses":{"200":{"description":"OK"}}}}}}`,
	} {
		if _, err := Build([]byte(in), protoregistry.GlobalFiles, Defaults); err == nil {
			t.Errorf("Build(%s) = nil error", name)
		}
	}
}

// TestProblemSchema: the problems the edge writes, for every code it has,
// are valid under the published Problem schema.
func TestProblemSchema(t *testing.T) {
	_, out := build(t)
	doc, err := openapi3.NewLoader().LoadFromData(out)
	if err != nil {
		t.Fatal(err)
	}
	schema := doc.Components.Schemas["Problem"].Value
	for code := range problem.Catalogue() {
		p := problem.New(code, "detail")
		p.TraceID = "abc"
		p.Errors = []problem.FieldViolation{{Field: "lines[0].sku", Pointer: "#/lines/0/sku", Detail: "bad"}}
		rec := httptest.NewRecorder()
		p.Write(rec)
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, problemMedia) {
			t.Errorf("%s: Content-Type %q", code, ct)
		}
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		if err := schema.VisitJSON(v); err != nil {
			t.Errorf("%s: problem %s does not fit the schema: %v", code, rec.Body, err)
		}
	}
}
