package gateway

import (
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/problem"
)

// TestProblemTypeBase: with problems.type_base set every problem's type is
// absolute under it (raised by the edge, by auth, for an unreachable
// upstream, on the admin listener), so a client behind a path-prefix
// ingress can follow it; without the section it stays /problems/<slug>.
func TestProblemTypeBase(t *testing.T) {
	const base = "https://api.example.com/shop/problems/"
	answered := []struct{ name, method, path, token, code string }{
		{"404 no route", "GET", "/api/nope", adminToken, problem.CodeRouteNotFound},
		{"401 no token", "GET", "/api/orders/ord-1", "", problem.CodeUnauthenticated},
		{"405 method", "DELETE", "/api/orders", adminToken, problem.CodeMethodNotAllowed},
		{"502 upstream down", "GET", "/api/orders/ord-1", aliceToken, problem.CodeUpstreamUnavailable},
		{"404 unknown page", "GET", "/problems/nope", "", problem.CodeNotFound},
	}
	for _, tt := range []struct{ name, base, want string }{
		{"absolute", base, base},
		{"default", "", problem.TypeBase},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{down: allDown.down, cfg: func(c *Config) { c.Problems.TypeBase = tt.base }})
			for _, a := range answered {
				r := h.do(a.method, a.path, a.token, "")
				body := r.json(t)
				if want := tt.want + problem.Slug(a.code); body["code"] != a.code || body["type"] != want {
					t.Errorf("%s: %d code %v type %v, want %s and %s", a.name, r.status, body["code"], body["type"], a.code, want)
				}
			}
		})
	}
	t.Run("admin", func(t *testing.T) {
		a := newAdminHarness(t, func(h *harness) { h.cfg.Problems.TypeBase = base })
		_, body := a.call(t, "GET", "/admin/nope", adminToken)
		if want := `"type":"` + base + "route-not-found" + `"`; !strings.Contains(body, want) {
			t.Errorf("GET /admin/nope = %s, want %s", body, want)
		}
	})
}

// TestProblemTypeBaseChecked: a type_base that is not an absolute http(s)
// URI ending in "/" is a config error naming the key.
func TestProblemTypeBaseChecked(t *testing.T) {
	for _, tt := range []struct {
		base string
		ok   bool
	}{
		{"https://api.example.com/problems/", true},
		{"http://127.0.0.1:8080/shop/problems/", true},
		{"https://api.example.com/", true},
		{"/shop/problems/", false},
		{"problems/", false},
		{"https://api.example.com/problems", false},
		{"ftp://api.example.com/problems/", false},
		{"https:///problems/", false},
		{"https://api.example.com/problems/?v=1", false},
		{"https://api.example.com/problems/#x", false},
		{"https://user:pw@api.example.com/problems/", false},
	} {
		t.Run(tt.base, func(t *testing.T) {
			c := DevConfig(0)
			c.Problems.TypeBase = tt.base
			err := c.Validate()
			if tt.ok && err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
			if !tt.ok && (err == nil || !strings.Contains(err.Error(), "problems.type_base")) {
				t.Errorf("Validate() = %v, want an error naming problems.type_base", err)
			}
		})
	}
}
