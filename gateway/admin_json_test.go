package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// capitalKeys returns the path of every object key in v that starts with a
// capital letter: a Go field name that reached the JSON without a tag. Keys
// holding a space or a slash are data, not names (a route selector such as
// "POST /api/orders" in the config), and are left alone.
func capitalKeys(path string, v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if r := []rune(k); len(r) > 0 && unicode.IsUpper(r[0]) && !strings.ContainsAny(k, " /") {
				out = append(out, path+"."+k)
			}
			out = append(out, capitalKeys(path+"."+k, e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, capitalKeys(path+"[]", e)...)
		}
	}
	return out
}

// TestAdminJSONIsCamelCase: every admin answer, and every schema of the
// admin OpenAPI fragment, names its members in lowerCamel (breaker counts
// were Go field names, "TotalSuccesses").
func TestAdminJSONIsCamelCase(t *testing.T) {
	a := newAdminHarness(t)
	writeConfig(t, a.path, a.cfg)
	calls := []struct{ method, path string }{
		{"GET", "/admin/config"}, {"GET", "/admin/versions"}, {"GET", "/admin/routes"},
		{"GET", "/admin/upstreams"}, {"GET", "/admin/limits"}, {"POST", "/admin/reload"},
		{"GET", "/admin/audit"},
	}
	for _, c := range calls {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			code, body := a.call(t, c.method, c.path, adminToken)
			var v any
			if err := json.Unmarshal([]byte(body), &v); code != 200 || err != nil {
				t.Fatalf("%s %s = %d %s (%v)", c.method, c.path, code, body, err)
			}
			seen := map[string]bool{}
			for _, k := range capitalKeys("", v) {
				if seen[k] {
					continue
				}
				seen[k] = true
				t.Errorf("%s %s: key %s is not lowerCamel", c.method, c.path, k)
			}
		})
	}
	t.Run("admin_openapi.json", func(t *testing.T) {
		var doc struct {
			Components struct{ Schemas map[string]any }
		}
		if err := json.Unmarshal(adminOpenAPI, &doc); err != nil {
			t.Fatal(err)
		}
		for name, s := range doc.Components.Schemas {
			for _, k := range propertyNames(s) {
				if unicode.IsUpper([]rune(k)[0]) {
					t.Errorf("schema %s: property %s is not lowerCamel", name, k)
				}
			}
		}
	})
}

// propertyNames returns the names under every "properties" in a schema.
func propertyNames(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if props, ok := e.(map[string]any); ok && k == "properties" {
				for name := range props {
					out = append(out, name)
				}
			}
			out = append(out, propertyNames(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, propertyNames(e)...)
		}
	}
	return out
}
