package auth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/gateway/route/selector"
)

var routes = []*route.Route{
	{Method: "GET", Pattern: "/api/orders", RPC: "/portico.order.v1.OrderService/ListOrders"},
	{Method: "POST", Pattern: "/api/orders", RPC: "/portico.order.v1.OrderService/CreateOrder"},
	{Method: "GET", Pattern: "/api/orders/{id}", RPC: "/portico.order.v1.OrderService/GetOrder"},
	{Method: "POST", Pattern: "/api/orders/{id}:cancel", RPC: "/portico.order.v1.OrderService/CancelOrder"},
	{Method: "GET", Pattern: "/api/ordersx", RPC: "/portico.x.v1.X/Get"},
	{Method: "PATCH", Pattern: "/api/inventory/{item.sku}", RPC: "/portico.inventory.v1.InventoryService/UpdateItem"},
}

func TestParseAllow(t *testing.T) {
	tests := []struct {
		sel  string
		want string // indexes of routes selected
	}{
		{"*", "012345"},
		{"GET *", "024"},
		{"/api/orders/**", "0123"},
		{"POST /api/orders/**", "13"},
		{"/api/orders/{id}", "2"},
		{"portico.order.v1.OrderService/GetOrder", "2"},
		{"/portico.order.v1.OrderService/GetOrder", "2"},
		{"portico.order.v1.OrderService/*", "0123"},
		{"PATCH portico.inventory.v1.InventoryService/*", "5"},
	}
	for _, tt := range tests {
		sel, err := auth.ParseAllow(tt.sel)
		if err != nil {
			t.Errorf("ParseAllow(%q) = %v", tt.sel, err)
			continue
		}
		got := ""
		for i, rt := range routes {
			if sel.Selects(rt) {
				got += string(rune('0' + i))
			}
		}
		if got != tt.want {
			t.Errorf("ParseAllow(%q) selects %s, want %s", tt.sel, got, tt.want)
		}
	}
	for _, bad := range []string{"", "get *", "orders", "a/b/c", "x.Y/Get*", "GET", "HEAD *", "HEAD /api/orders"} {
		if _, err := auth.ParseAllow(bad); err == nil {
			t.Errorf("ParseAllow(%q) = nil error", bad)
		}
	}
	// These parse but select none of routes: NewPolicy refuses them.
	for _, none := range []string{"FETCH *", "/api/orders/*", "* *", "DELETE *"} {
		if _, err := auth.NewPolicy([]auth.Rule{{Roles: []string{"x"}, Allow: []string{none}}}, routes); err == nil {
			t.Errorf("NewPolicy allowing %q = nil error", none)
		}
	}
}

func TestPolicy(t *testing.T) {
	pol, err := auth.NewPolicy([]auth.Rule{
		{Roles: []string{"partner"}, Allow: []string{"GET /api/orders/**"}},
		{Roles: []string{"ops", "partner"}, Allow: []string{"portico.inventory.v1.InventoryService/*"}},
	}, routes)
	if err != nil {
		t.Fatal(err)
	}
	partner := auth.NewPrincipal("p", []string{"partner"}, "", "", "")
	two := auth.NewPrincipal("q", []string{"viewer", "ops"}, "", "", "")
	admin := auth.NewPrincipal("a", []string{"admin"}, "", "", "")
	for _, tt := range []struct {
		p    auth.Principal
		rt   int
		want bool
	}{
		{partner, 0, true}, {partner, 2, true}, {partner, 1, false}, {partner, 5, true},
		{two, 5, true}, {two, 0, false},
		{admin, 0, false}, // the configured policy replaces the built-in one
	} {
		if got := pol.Allowed(tt.p, routes[tt.rt]); got != tt.want {
			t.Errorf("Allowed(%v, %s) = %v, want %v", tt.p.Roles, routes[tt.rt].Key(), got, tt.want)
		}
	}
	var uncovered []string
	for _, rt := range pol.Uncovered() {
		uncovered = append(uncovered, rt.Key())
	}
	if got := strings.Join(uncovered, ","); got != "POST /api/orders,POST /api/orders/{id}:cancel,GET /api/ordersx" {
		t.Errorf("Uncovered = %s", got)
	}
	if got := strings.Join(pol.Roles(routes[5]), ","); got != "ops,partner" {
		t.Errorf("Roles(UpdateItem) = %s, want ops,partner", got)
	}
	if _, err := auth.NewPolicy([]auth.Rule{{Roles: []string{"x"}, Allow: []string{"/api/nothing/**"}}}, routes); err == nil {
		t.Error("a selector selecting no route: nil error")
	}
	if _, err := auth.NewPolicy([]auth.Rule{{Allow: []string{"*"}}}, routes); err == nil {
		t.Error("a rule without roles: nil error")
	}
	if _, err := auth.NewPolicy([]auth.Rule{{Roles: []string{auth.RoleService}, Allow: []string{"*"}}}, routes); err == nil {
		t.Error("a rule granting the reserved role service: nil error")
	}
}

// TestPolicyErrorPaths: each fault of NewPolicy is a *RuleError naming
// its rule and field as a config path ("policy[1].allow[1]"), not a rule
// number behind a stuttered prefix.
func TestPolicyErrorPaths(t *testing.T) {
	_, err := auth.NewPolicy([]auth.Rule{
		{Roles: []string{"reader"}, Allow: []string{"GET /api/orders"}},
		{Roles: []string{"ops", auth.RoleService}, Allow: []string{"*", "GET /api/nothing"}},
		{Roles: []string{"ops"}},
	}, routes)
	want := `policy[1].roles[1]: role "service" is reserved for Portico's services calling one another; the edge never grants it` + "\n" +
		`policy[1].allow[1]: "GET /api/nothing": selects no route` + "\n" +
		`policy[2].allow: at least one selector is required`
	if err == nil || err.Error() != want {
		t.Fatalf("NewPolicy() = %v\nwant %s", err, want)
	}
	var re *auth.RuleError
	if !errors.As(err, &re) || re.Rule != 1 || re.Field != "roles[1]" || !errors.Is(err, selector.ErrNoRoute) {
		t.Errorf("NewPolicy() error = %#v, want *RuleError of rule 1 and selector.ErrNoRoute", re)
	}
}
