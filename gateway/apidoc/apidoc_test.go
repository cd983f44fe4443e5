package apidoc

import (
	"encoding/json"
	"strings"
	"testing"

	genopenapi "github.com/portico-gateway/portico/gen/openapi"
)

func build(t *testing.T) map[string]any {
	t.Helper()
	out, err := Build(genopenapi.JSON, Options{
		Title: "Portico API", Version: "v1",
		Operations: []Operation{
			{Method: "POST", Path: "/api/orders", Created: true, IdempotencyKey: true},
			{Method: "POST", Path: "/api/inventory", Created: true},
		},
		Renames: map[string]string{
			"STATUS_PENDING": "PENDING", "STATUS_CONFIRMED": "CONFIRMED", "STATUS_FAILED": "FAILED", "STATUS_CANCELLED": "CANCELLED",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func at(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func TestBuild(t *testing.T) {
	doc := build(t)
	tests := []struct {
		name string
		path []string
		want any
	}{
		{"title", []string{"info", "title"}, "Portico API"},
		{"201 location", []string{"paths", "/api/orders", "post", "responses", "201", "headers", "Location", "type"}, "string"},
		{"201 replayed", []string{"paths", "/api/orders", "post", "responses", "201", "headers", "Idempotent-Replayed", "type"}, "string"},
		{"create item 201", []string{"paths", "/api/inventory", "post", "responses", "201", "description"}, "Created; Location names the new resource."},
		{"get stays 200", []string{"paths", "/api/orders/{id}", "get", "responses", "200", "description"}, "A successful response."},
		{"404 only with variables", []string{"paths", "/api/orders", "get", "responses", "404"}, nil},
		{"404 ref", []string{"paths", "/api/orders/{id}", "get", "responses", "404", "$ref"}, "#/responses/NotFound"},
		{"problem response", []string{"responses", "GatewayTimeout", "schema", "$ref"}, "#/definitions/Problem"},
		{"bearer", []string{"securityDefinitions", "bearer", "name"}, "Authorization"},
		{"merged path", []string{"paths", "/api/inventory/{item.sku}"}, nil},
		{"problem code", []string{"definitions", "Problem", "properties", "code", "type"}, "string"},
	}
	for _, tt := range tests {
		if got := at(doc, tt.path...); got != tt.want {
			t.Errorf("%s: %v = %v, want %v", tt.name, tt.path, got, tt.want)
		}
	}
	price := at(doc, "definitions", "v1ReservedLine", "properties", "unitPrice")
	if at(price, "$ref") != nil || at(price, "description") != "Unit price when reserved." {
		t.Errorf("unitPrice = %v, want its $ref moved into allOf next to the description", price)
	}
	patch, _ := at(doc, "paths", "/api/inventory/{sku}", "patch", "parameters").([]any)
	if len(patch) == 0 || at(patch[0], "name") != "sku" {
		t.Errorf("PATCH parameters = %v, want the path variable renamed to sku", patch)
	}
	enum, _ := at(doc, "definitions", "v1OrderStatus", "enum").([]any)
	if len(enum) != 4 || enum[0] != "PENDING" {
		t.Errorf("v1OrderStatus enum = %v", enum)
	}
	if d, _ := at(doc, "definitions", "v1OrderStatus", "description").(string); strings.Contains(d, "STATUS_PENDING") {
		t.Errorf("enum description still names STATUS_PENDING: %s", d)
	}
	if pay, _ := at(doc, "definitions", "v1PaymentStatus", "enum").([]any); len(pay) == 0 || pay[0] != "STATUS_CAPTURED" {
		t.Errorf("v1PaymentStatus = %v; values not in Renames must stay", pay)
	}
}

func TestBuildRejects(t *testing.T) {
	for name, in := range map[string]string{
		"not json":  "{",
		"openapi 3": `{"openapi":"3.0.0","paths":{}}`,
		"no paths":  `{"swagger":"2.0"}`,
	} {
		if _, err := Build([]byte(in), Options{}); err == nil {
			t.Errorf("Build(%s) = nil error", name)
		}
	}
}
