package selector_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/gateway/route/selector"
)

func keys(rs []*route.Route) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Key())
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func TestResolve(t *testing.T) {
	rs := tableRoutes(t)
	orders := "GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch, GET /api/orders:export, POST /api/orders, POST /api/orders/{id}:cancel"
	for _, tt := range []struct{ sel, want string }{
		{"GET *", "GET /api/files/**, GET /api/inventory, GET /api/inventory/{sku}, GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch, GET /api/orders:export, GET /api/payments, GET /api/payments/{id}, GET /api/reservations/{id}, GET /apiary/hives, GET /v1/things"},
		{"SEARCH *", "SEARCH /api/things"},
		{"/api/orders", "GET /api/orders, POST /api/orders"},
		{"HEAD /api/orders", "GET /api/orders"},
		{"POST /api/orders/{id}:cancel", "POST /api/orders/{id}:cancel"},
		{"/api/wild/*", "POST /api/wild/*"},
		{"/api/orders/**", "GET /api/orders, GET /api/orders/{id}, GET /api/orders/{id}:watch, POST /api/orders, POST /api/orders/{id}:cancel"},
		{"/api/files/**", "GET /api/files/**"}, // the group, which holds the literal template
		{"/apiary/**", "GET /apiary/hives"},
		{"/apiary/hives", "GET /apiary/hives"},
		{"GET /v1/things", "GET /v1/things"},
		{"portico.order.v1.OrderService/*", orders},
		{"/portico.order.v1.OrderService/*", orders},
		{"GET portico.order.v1.OrderService/GetOrder", "GET /api/orders/{id}"},
		{"portico.order.v1.OrderService.GetOrder", "GET /api/orders/{id}"},
		{"POST /odd.v1.OddService/Wild", "POST /api/wild/*"},
	} {
		got, err := selector.Resolve(tt.sel, rs)
		if err != nil || keys(got) != tt.want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", tt.sel, keys(got), err, tt.want)
		}
	}
}

func TestResolveRefuses(t *testing.T) {
	rs := tableRoutes(t)
	for _, tt := range []struct {
		sel  string
		want error // nil: a syntax error
	}{
		{"", nil}, {"get /api/orders", nil}, {"GET", nil}, {"GET ", nil}, {"GET  /api/orders", nil},
		{" /api/orders", nil}, {"orders", nil}, {"a/b/c", nil}, {"x.Y/Get*", nil}, {"*/*", nil},
		{"portico.order.v1.OrderService.*", nil},
		{"GET portico.order.v1.OrderService/Get-Order", nil},
		{"/api/nothing", selector.ErrNoRoute}, {"* *", selector.ErrNoRoute}, {"portico.order.v1.OrderService", selector.ErrNoRoute}, {"DELETE *", selector.ErrNoRoute},
		{"GET /api/orders/{id}:cancel", selector.ErrNoRoute}, {"* /api/orders", selector.ErrNoRoute},
		{"portico.order.v1.OrderService/Nope", selector.ErrNoRoute}, {"/api/orders/*", selector.ErrNoRoute},
	} {
		_, err := selector.Resolve(tt.sel, rs)
		if err == nil || tt.want != nil && !errors.Is(err, tt.want) || tt.want == nil && errors.Is(err, selector.ErrNoRoute) {
			t.Errorf("Resolve(%q) = %v, want %v", tt.sel, err, cmpOrSyntax(tt.want))
		}
	}
}

func cmpOrSyntax(err error) any {
	if err == nil {
		return "a syntax error"
	}
	return err
}

func TestString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"*", "*"},
		{"GET *", "GET *"},
		{"pkg.Service.Method", "pkg.Service/Method"},
		{"/pkg.Service.Method", "/pkg.Service.Method"},
		{"POST pkg.Service/*", "POST pkg.Service/*"},
		{"/api/orders/**", "/api/orders/**"},
		{"HEAD /api/orders/{id}", "HEAD /api/orders/{id}"},
	} {
		s, err := selector.Parse(tt.in)
		if err != nil || s.String() != tt.want {
			t.Errorf("Parse(%q).String() = %q, %v; want %q", tt.in, s.String(), err, tt.want)
		}
	}
}
