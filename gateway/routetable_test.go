package gateway

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/config"
)

// TestDescribeLoadedServices: the route table of a config lists the
// built-in routes and those of a service loaded from a descriptor set
// (examples/shipping's, as `buf build -o` wrote it) with their RPC,
// upstream, roles, limit and shed groups and timeout; an upstream using
// server reflection is named as resolved at start and never dialed (its
// address refuses connections: a dial would fail the load).
func TestDescribeLoadedServices(t *testing.T) {
	set, err := filepath.Abs("../examples/shipping/shipping.binpb")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Dev(0)
	cfg.Upstreams = append(cfg.Upstreams,
		config.UpstreamConfig{Name: "shipping", Addresses: []string{"127.0.0.1:1"}, Services: []string{"acme.shipping.v1.ShippingService"}, Descriptors: set},
		config.UpstreamConfig{Name: "tracking", Addresses: []string{"127.0.0.1:1"}, Services: []string{"acme.tracking.v1.TrackingService"}, Reflection: true})
	cfg.Limits.Groups = append(cfg.Limits.Groups, config.LimitGroupConfig{Name: "shipping-writes",
		Routes: []string{"POST /api/shipments"}, Limit: config.LimitConfig{Rate: 5, Burst: 5}})
	cfg.Shed.Groups = []config.ShedGroupConfig{{Name: "reads", Routes: []string{"acme.shipping.v1.ShippingService.GetShipment"}, MaxInFlight: 8}}
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	writeConfig(t, path, cfg)

	table, err := Describe(path, false)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]RouteInfo{}
	for _, r := range table.Routes {
		byKey[r.Method+" "+r.Path] = r
	}
	for _, tt := range []struct {
		key, rpc, upstream, limitGroup, shedGroup, timeout string
	}{
		{"POST /api/orders", "/portico.order.v1.OrderService/CreateOrder", "order", "order-writes", "", "5s"},
		{"GET /api/inventory/{sku}", "/portico.inventory.v1.InventoryService/GetItem", "inventory", "", "", "5s"},
		{"POST /api/shipments", "/acme.shipping.v1.ShippingService/CreateShipment", "shipping", "shipping-writes", "", "5s"},
		{"GET /api/shipments/{id}", "/acme.shipping.v1.ShippingService/GetShipment", "shipping", "", "reads", "5s"},
		{"GET /api/orders/{order_id}/shipment", "/acme.shipping.v1.ShippingService/GetShipment", "shipping", "", "reads", "5s"},
		{"POST /api/shipments/{id}:dispatch", "/acme.shipping.v1.ShippingService/DispatchShipment", "shipping", "", "", "5s"},
	} {
		r, ok := byKey[tt.key]
		if !ok {
			t.Errorf("%s: not in the table", tt.key)
			continue
		}
		if r.RPC != tt.rpc || r.Upstream != tt.upstream || r.LimitGroup != tt.limitGroup || r.ShedGroup != tt.shedGroup || r.Timeout != tt.timeout {
			t.Errorf("%s = %+v, want rpc %s upstream %s limit group %q shed group %q timeout %s", tt.key, r, tt.rpc, tt.upstream, tt.limitGroup, tt.shedGroup, tt.timeout)
		}
		if !slices.Contains(r.Roles, "admin") { // the dev admin role reaches loaded routes too
			t.Errorf("%s: roles %v lack admin", tt.key, r.Roles)
		}
	}
	if w := byKey["GET /api/orders/{id}:watch"]; w.MaxDuration == "" || w.IdleTimeout == "" {
		t.Errorf("WatchOrder = %+v, want its stream bounds", w)
	}
	if want := []ResolvedAtStart{{Upstream: "tracking", Services: []string{"acme.tracking.v1.TrackingService"}}}; !slices.EqualFunc(table.Resolved, want,
		func(a, b ResolvedAtStart) bool {
			return a.Upstream == b.Upstream && slices.Equal(a.Services, b.Services)
		}) {
		t.Errorf("resolved at start = %+v, want %+v", table.Resolved, want)
	}
	var b strings.Builder
	if err := table.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ROUTE", "LIMIT GROUP", "acme.shipping.v1.ShippingService/CreateShipment",
		"upstream tracking: acme.tracking.v1.TrackingService by server reflection, resolved when the edge starts (describe --reflect dials it to list them)",
		"UPSTREAM", "inventory  127.0.0.1:1", "  off\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestDescribeReflect: describe leaves an upstream using server
// reflection undialled and names it; with reflect it dials it, as the
// edge does at start, and lists its routes, with the version the edge
// reports.
func TestDescribeReflect(t *testing.T) {
	h := newHarness(t, setup{})
	cfg := config.Dev(0)
	for i := range cfg.Upstreams {
		cfg.Upstreams[i].Addresses = h.cfg.Upstreams[i].Addresses
	}
	cfg.Upstreams[0].Services, cfg.Upstreams[0].Reflection = []string{"portico.inventory.v1.InventoryService"}, true
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	writeConfig(t, path, cfg)
	has := func(tb RouteTable, key string) bool {
		return slices.ContainsFunc(tb.Routes, func(r RouteInfo) bool { return r.Method+" "+r.Path == key })
	}

	deferred, err := Describe(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if has(deferred, "GET /api/inventory/{sku}") || len(deferred.Resolved) != 1 || deferred.Version != "" {
		t.Errorf("without reflect: %d routes, resolved %+v, version %q; want no inventory route, inventory resolved at start, no version",
			len(deferred.Routes), deferred.Resolved, deferred.Version)
	}
	reflected, err := Describe(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if !has(reflected, "GET /api/inventory/{sku}") || len(reflected.Resolved) != 0 || reflected.Version == "" {
		t.Errorf("with reflect: %d routes, resolved %+v, version %q; want the inventory routes and a version",
			len(reflected.Routes), reflected.Resolved, reflected.Version)
	}
	loaded, err := config.Load(path, CheckRoutes) // what check-config and the edge load
	if err != nil {
		t.Fatal(err)
	}
	if v := versionOf(loaded).ID; v != reflected.Version {
		t.Errorf("describe --reflect version %s, the edge's %s", reflected.Version, v)
	}
}

// TestDescribeUpstreamTLS: the table names each upstream's TLS, on for a
// lone server_name.
func TestDescribeUpstreamTLS(t *testing.T) {
	cfg := config.Dev(0)
	cfg.Upstreams[2].TLS.ServerName = "order.internal"
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	writeConfig(t, path, cfg)
	table, err := Describe(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if u := table.Upstreams[2]; !u.TLS || u.ServerName != "order.internal" || table.Upstreams[0].TLS {
		t.Errorf("upstreams = %+v, want order on TLS with server_name order.internal, inventory off", table.Upstreams)
	}
	var b strings.Builder
	if err := table.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "on (system CAs, server_name order.internal)") {
		t.Errorf("table lacks order's TLS:\n%s", b.String())
	}
}
