package gateway

import (
	"slices"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
)

// builtInRoles are the roles the built-in policy granted each built-in
// route when its grants were path prefixes ("GET *", "GET
// /api/inventory/**", "GET /api/orders/**", "GET /api/orders:export",
// "POST /api/orders/**"): naming RPCs instead changes none of them.
var builtInRoles = map[string]string{
	"GET /api/inventory/{sku}":            "admin,customer,reader",
	"GET /api/inventory":                  "admin,customer,reader",
	"POST /api/inventory":                 "admin",
	"PATCH /api/inventory/{item.sku}":     "admin",
	"POST /api/reservations":              "admin",
	"GET /api/reservations/{id}":          "admin,reader",
	"POST /api/reservations/{id}:commit":  "admin",
	"POST /api/reservations/{id}:release": "admin",
	"POST /api/payments":                  "admin",
	"GET /api/payments/{id}":              "admin,reader",
	"GET /api/payments":                   "admin,reader",
	"POST /api/payments/{id}:refund":      "admin",
	"POST /api/orders":                    "admin,customer",
	"GET /api/orders/{id}":                "admin,customer,reader",
	"GET /api/orders":                     "admin,customer,reader",
	"GET /api/orders/{id}:watch":          "admin,customer,reader",
	"GET /api/orders:export":              "admin,customer,reader",
	"POST /api/orders/{id}:cancel":        "admin,customer",
}

// TestDefaultPolicyRoles: under the built-in policy every built-in route,
// on the generated path and on the descriptor path, has the roles it had,
// and every route of a loaded service (one under /api/orders/ too) is
// admin's only.
func TestDefaultPolicyRoles(t *testing.T) {
	set := rogueSet(t, "/api/orders/{order_id}/shipment", "POST /api/orders/{order_id}/shipment", "/api/rogue/{name}", "/api/inventory/{name}/stock")
	for _, path := range []string{"generated", "descriptors"} {
		t.Run(path, func(t *testing.T) {
			c, err := parseWith(t, t.TempDir(), func(c *config.Config) {
				if path == "descriptors" {
					toDescriptors(t, c, false)
				}
				withRogue(set)(c)
			})
			if err != nil {
				t.Fatal(err)
			}
			routes, err := Routes(c)
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, r := range routes {
				key, got := r.Method+" "+r.Path, strings.Join(r.Roles, ",")
				want, builtIn := builtInRoles[key]
				if !builtIn {
					want = "admin"
				} else {
					seen++
				}
				if r.Upstream == "rogue" && builtIn || got != want {
					t.Errorf("%s (%s @ %s): roles %s, want %s", key, r.RPC, r.Upstream, got, want)
				}
			}
			if seen != len(builtInRoles) || len(routes) != len(builtInRoles)+4 {
				t.Errorf("%d routes, %d built-in, want %d and %d", len(routes), seen, len(builtInRoles)+4, len(builtInRoles))
			}
		})
	}
}

// TestLoadedRouteDeniedToCustomer: a customer (alice) who may read any of
// her orders is refused a loaded service's GET
// /api/orders/{order_id}/shipment with 403 under the built-in policy (the
// order service's ownership check does not guard it); admin passes the
// policy (the upstream is down: 503, not 403).
func TestLoadedRouteDeniedToCustomer(t *testing.T) {
	h := newHarness(t, setup{cfg: withRogue(rogueSet(t, "/api/orders/{order_id}/shipment"))})
	for _, tt := range []struct {
		token  string
		denied bool
	}{{aliceToken, true}, {readerToken, true}, {adminToken, false}} {
		r := h.do("GET", "/api/orders/ord-1/shipment", tt.token, "")
		if denied := r.status == 403; denied != tt.denied {
			t.Errorf("GET /api/orders/ord-1/shipment as %s = %d %s, want denied %v", tt.token, r.status, r.body, tt.denied)
		}
	}
	if r := h.do("GET", "/api/orders/ord-1", aliceToken, ""); r.status == 403 {
		t.Errorf("GET /api/orders/ord-1 as alice = 403, want the order service to decide")
	}
}

// TestDefaultRulesSelectOnlyBuiltIn: every selector of the built-in rules
// but admin's "*" names an RPC of a built-in service, so it cannot select
// a route of any other service.
func TestDefaultRulesSelectOnlyBuiltIn(t *testing.T) {
	for _, r := range auth.DefaultRules() {
		for _, text := range r.Allow {
			if text == "*" && slices.Equal(r.Roles, []string{auth.RoleAdmin}) {
				continue
			}
			target := text[strings.Index(text, " ")+1:]
			svc, _, _ := strings.Cut(target, "/")
			if !slices.Contains(Services(), svc) {
				t.Errorf("%v: %q names no built-in service's RPC", r.Roles, text)
			}
		}
	}
}

// TestAdminOnlyWarning: without auth.policy, check-config warns about a
// loaded service the built-in policy leaves to admin; not with a policy,
// nor for a built-in service moved to the descriptor path.
func TestAdminOnlyWarning(t *testing.T) {
	set := rogueSet(t, "/api/rogue/{name}", "POST /api/rogue")
	tests := []struct {
		name string
		edit func(*config.Config)
		want bool
	}{
		{"built-in policy", withRogue(set), true},
		{"auth.policy set", func(c *config.Config) {
			withRogue(set)(c)
			c.Auth.Policy = []config.PolicyRuleConfig{{Roles: []string{"admin"}, Allow: []string{"*"}}, {Roles: []string{"customer", "reader"}, Allow: []string{rogueService + "/*"}}}
		}, false},
		{"built-in services on descriptors", func(c *config.Config) { toDescriptors(t, c, false) }, false},
	}
	const want = "auth.policy: none, so the built-in policy grants the 2 routes of acme.rogue.v1.RogueService (upstream rogue) to admin only"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseWith(t, t.TempDir(), tt.edit)
			if err != nil {
				t.Fatal(err)
			}
			ws := Warnings(c)
			got := slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, want) })
			if got != tt.want || !tt.want && slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, "to admin only") }) {
				t.Errorf("Warnings = %q, want the admin-only warning %v", ws, tt.want)
			}
		})
	}
}
