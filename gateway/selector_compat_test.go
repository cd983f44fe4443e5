package gateway

import (
	"slices"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/route"
)

// compatRoutes are the built-in routes and routes a loaded proto may
// declare beside them: a template outside /api (never served, still in the
// table), one whose first segment only begins with "api", a custom method,
// a custom HEAD, an anonymous wildcard and a service without a package.
func compatRoutes(t *testing.T) []*route.Route {
	t.Helper()
	table, _, err := buildRoutes(config.Dev(0), registrations)
	if err != nil {
		t.Fatal(err)
	}
	return append(table.Routes(),
		&route.Route{Method: "GET", Pattern: "/v1/things", RPC: "/odd.v1.OddService/ListThings"},
		&route.Route{Method: "GET", Pattern: "/apiary/hives", RPC: "/odd.v1.OddService/ListHives"},
		&route.Route{Method: "SEARCH", Pattern: "/api/things", RPC: "/odd.v1.OddService/SearchThings"},
		&route.Route{Method: "HEAD", Pattern: "/api/probe", RPC: "/odd.v1.OddService/Probe"},
		&route.Route{Method: "GET", Pattern: "/api/wild/*", RPC: "/odd.v1.OddService/Wild"},
		&route.Route{Method: "POST", Pattern: "/api/hello", RPC: "/Greeter/Hello"},
	)
}

// overrideSelects is what a routes.overrides key (and so a limits or shed
// group's route) selects: the routes' keys, or "error".
func overrideSelects(key string, routes []*route.Route) string {
	got, err := resolveOverrides(map[string]config.RouteOverride{key: {}}, routes)
	if err != nil {
		return "error"
	}
	var keys []string
	for r := range got {
		keys = append(keys, r.Key())
	}
	return joinKeys(keys)
}

// policySelects is what an auth.policy allow selector grants.
func policySelects(sel string, routes []*route.Route) string {
	pol, err := auth.NewPolicy([]auth.Rule{{Roles: []string{"probe"}, Allow: []string{sel}}}, routes)
	if err != nil {
		return "error"
	}
	var keys []string
	for _, r := range routes {
		if slices.Contains(pol.Roles(r), "probe") {
			keys = append(keys, r.Key())
		}
	}
	return joinKeys(keys)
}

func joinKeys(keys []string) string {
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

// shedSelects is what a shed group's route selects.
func shedSelects(key string, routes []*route.Route) string {
	selected, err := groupRoutes("shed.groups", []config.ShedGroupConfig{{Name: "g", Routes: []string{key}}}, shedGroupParts, routes)
	if err != nil {
		return "error"
	}
	var keys []string
	for r := range selected {
		keys = append(keys, r.Key())
	}
	return joinKeys(keys)
}

// TestSelectorCompat pins what each selector grammar selected before
// issue 22 made them one: every selector a config could use then selects
// the same routes now. "error" marks a selector refused (at validation, or
// at load since it selected no route); the one grammar accepts the union,
// so a row refused then is not checked here (the selector package's tests
// say what it makes of those).
func TestSelectorCompat(t *testing.T) {
	rs := compatRoutes(t)
	for _, tt := range []struct {
		sel string
		// override is what routes.overrides, limits.groups and
		// shed.groups selected; policy what auth.policy granted.
		override, policy string
	}{
		{"*",
			"error",
			"GET /api/inventory, GET /api/inventory/{sku}, GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch, GET /api/orders:export, GET /api/payments, GET /api/payments/{id}, GET /api/reservations/{id}, GET /api/wild/*, GET /apiary/hives, GET /v1/things, HEAD /api/probe, PATCH /api/inventory/{item.sku}, POST /api/hello, POST /api/inventory, POST /api/orders, POST /api/orders/{id}:cancel, POST /api/payments, POST /api/payments/{id}:refund, POST /api/reservations, POST /api/reservations/{id}:commit, POST /api/reservations/{id}:release, SEARCH /api/things"},
		{"GET *",
			"error",
			"GET /api/inventory, GET /api/inventory/{sku}, GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch, GET /api/orders:export, GET /api/payments, GET /api/payments/{id}, GET /api/reservations/{id}, GET /api/wild/*, GET /apiary/hives, GET /v1/things"},
		{"POST *",
			"error",
			"POST /api/hello, POST /api/inventory, POST /api/orders, POST /api/orders/{id}:cancel, POST /api/payments, POST /api/payments/{id}:refund, POST /api/reservations, POST /api/reservations/{id}:commit, POST /api/reservations/{id}:release"},
		{"HEAD *",
			"error",
			"error"},
		{"DELETE *",
			"error",
			"error"},
		{"SEARCH *",
			"error",
			"error"},
		{"/api/orders",
			"GET /api/orders, POST /api/orders",
			"GET /api/orders, POST /api/orders"},
		{"GET /api/orders",
			"GET /api/orders",
			"GET /api/orders"},
		{"POST /api/orders",
			"POST /api/orders",
			"POST /api/orders"},
		{"HEAD /api/orders",
			"GET /api/orders",
			"error"},
		{"get /api/orders",
			"error",
			"error"},
		{"FETCH /api/orders",
			"error",
			"error"},
		{"SEARCH /api/things",
			"SEARCH /api/things",
			"error"},
		{"HEAD /api/probe",
			"HEAD /api/probe",
			"error"},
		{"GET /api/probe",
			"error",
			"error"},
		{"/api/orders/{id}",
			"GET /api/orders/{id}",
			"GET /api/orders/{id}"},
		{"GET /api/orders/{id}",
			"GET /api/orders/{id}",
			"GET /api/orders/{id}"},
		{"/api/orders/{id}:cancel",
			"POST /api/orders/{id}:cancel",
			"POST /api/orders/{id}:cancel"},
		{"POST /api/orders/{id}:cancel",
			"POST /api/orders/{id}:cancel",
			"POST /api/orders/{id}:cancel"},
		{"/api/orders:export",
			"GET /api/orders:export",
			"GET /api/orders:export"},
		{"/api/inventory/{item.sku}",
			"PATCH /api/inventory/{item.sku}",
			"PATCH /api/inventory/{item.sku}"},
		{"PATCH /api/inventory/{item.sku}",
			"PATCH /api/inventory/{item.sku}",
			"PATCH /api/inventory/{item.sku}"},
		{"/api/inventory/{sku}",
			"GET /api/inventory/{sku}",
			"GET /api/inventory/{sku}"},
		{"/api/orders/**",
			"error",
			"GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch, POST /api/orders, POST /api/orders/{id}:cancel"},
		{"GET /api/orders/**",
			"error",
			"GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch"},
		{"POST /api/orders/**",
			"error",
			"POST /api/orders, POST /api/orders/{id}:cancel"},
		{"/api/**",
			"error",
			"GET /api/inventory, GET /api/inventory/{sku}, GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch, GET /api/orders:export, GET /api/payments, GET /api/payments/{id}, GET /api/reservations/{id}, GET /api/wild/*, HEAD /api/probe, PATCH /api/inventory/{item.sku}, POST /api/hello, POST /api/inventory, POST /api/orders, POST /api/orders/{id}:cancel, POST /api/payments, POST /api/payments/{id}:refund, POST /api/reservations, POST /api/reservations/{id}:commit, POST /api/reservations/{id}:release, SEARCH /api/things"},
		{"GET /api/**",
			"error",
			"GET /api/inventory, GET /api/inventory/{sku}, GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch, GET /api/orders:export, GET /api/payments, GET /api/payments/{id}, GET /api/reservations/{id}, GET /api/wild/*"},
		{"/api/orders/*",
			"error",
			"error"},
		{"/api/wild/*",
			"GET /api/wild/*",
			"error"},
		{"GET /api/wild/*",
			"GET /api/wild/*",
			"error"},
		{"/api/ord",
			"error",
			"error"},
		{"/api",
			"error",
			"error"},
		{"/api/",
			"error",
			"error"},
		{"/apiary/hives",
			"error",
			"GET /apiary/hives"},
		{"GET /apiary/hives",
			"GET /apiary/hives",
			"GET /apiary/hives"},
		{"/apiary/**",
			"error",
			"GET /apiary/hives"},
		{"/v1/things",
			"error",
			"error"},
		{"GET /v1/things",
			"GET /v1/things",
			"error"},
		{"POST /v1/things",
			"error",
			"error"},
		{"/v1/**",
			"error",
			"error"},
		{"portico.order.v1.OrderService/GetOrder",
			"GET /api/orders/{id}",
			"GET /api/orders/{id}"},
		{"/portico.order.v1.OrderService/GetOrder",
			"GET /api/orders/{id}",
			"GET /api/orders/{id}"},
		{"portico.order.v1.OrderService.GetOrder",
			"GET /api/orders/{id}",
			"error"},
		{"/portico.order.v1.OrderService.GetOrder",
			"GET /api/orders/{id}",
			"error"},
		{"GET portico.order.v1.OrderService/GetOrder",
			"error",
			"GET /api/orders/{id}"},
		{"POST portico.order.v1.OrderService/GetOrder",
			"error",
			"error"},
		{"GET /portico.order.v1.OrderService/GetOrder",
			"error",
			"GET /api/orders/{id}"},
		{"portico.order.v1.OrderService/*",
			"error",
			"GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch, GET /api/orders:export, POST /api/orders, POST /api/orders/{id}:cancel"},
		{"/portico.order.v1.OrderService/*",
			"error",
			"GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch, GET /api/orders:export, POST /api/orders, POST /api/orders/{id}:cancel"},
		{"GET portico.order.v1.OrderService/*",
			"error",
			"GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch, GET /api/orders:export"},
		{"portico.order.v1.OrderService.*",
			"error",
			"error"},
		{"portico.order.v1.OrderService/Nope",
			"error",
			"error"},
		{"portico.order.v1.OrderService",
			"error",
			"error"},
		{"odd.v1.OddService/ListThings",
			"GET /v1/things",
			"GET /v1/things"},
		{"GET /odd.v1.OddService/ListThings",
			"error",
			"GET /v1/things"},
		{"odd.v1.OddService/*",
			"error",
			"GET /api/wild/*, GET /apiary/hives, GET /v1/things, HEAD /api/probe, SEARCH /api/things"},
		{"Greeter/Hello",
			"POST /api/hello",
			"POST /api/hello"},
		{"Greeter.Hello",
			"POST /api/hello",
			"error"},
		{"/Greeter/Hello",
			"POST /api/hello",
			"POST /api/hello"},
		{"POST /Greeter/Hello",
			"error",
			"POST /api/hello"},
		{"Greeter/*",
			"error",
			"POST /api/hello"},
		{"a/b/c",
			"error",
			"error"},
		{"x.Y/Get*",
			"error",
			"error"},
		{"*/*",
			"error",
			"error"},
		{"* *",
			"error",
			"error"},
		{"* /api/orders",
			"error",
			"error"},
		{"GET",
			"error",
			"error"},
		{"GET ",
			"error",
			"error"},
		{"GET  /api/orders",
			"error",
			"error"},
		{" /api/orders",
			"error",
			"error"},
		{"orders",
			"error",
			"error"},
		{"/api/orders /x",
			"error",
			"error"},
		{"/api/orders/{id} ",
			"error",
			"error"},
		{"portico.order.v1.OrderService/GetOrder/",
			"error",
			"error"},
		{"portico.order.v1.OrderService//GetOrder",
			"error",
			"error"},
		{"/portico.order.v1.OrderService/{GetOrder}",
			"error",
			"error"},
	} {
		if tt.override != "error" {
			if got := overrideSelects(tt.sel, rs); got != tt.override {
				t.Errorf("routes.overrides[%q] selects %q, want %q", tt.sel, got, tt.override)
			}
			if got := shedSelects(tt.sel, rs); got != tt.override {
				t.Errorf("shed.groups[0].routes: %q selects %q, want %q", tt.sel, got, tt.override)
			}
		}
		if tt.policy != "error" {
			if got := policySelects(tt.sel, rs); got != tt.policy {
				t.Errorf("auth.policy allow %q grants %q, want %q", tt.sel, got, tt.policy)
			}
		}
	}
}
