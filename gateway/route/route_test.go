package route

import (
	"slices"
	"strings"
	"testing"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

func table(t testing.TB) *Table {
	t.Helper()
	var all []*Route
	inv, err := FromService(inventoryv1.File_portico_inventory_v1_inventory_proto.Services().ByName("InventoryService"), "inventory")
	if err != nil {
		t.Fatal(err)
	}
	ord, err := FromService(orderv1.File_portico_order_v1_order_proto.Services().ByName("OrderService"), "order")
	if err != nil {
		t.Fatal(err)
	}
	all = append(append(all, inv...), ord...)
	tb, err := NewTable(all)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestMatch(t *testing.T) {
	tb := table(t)
	tests := []struct {
		method, path string
		wantRPC      string
		wantAllow    []string
	}{
		{"GET", "/api/orders", "/portico.order.v1.OrderService/ListOrders", nil},
		{"POST", "/api/orders", "/portico.order.v1.OrderService/CreateOrder", nil},
		{"GET", "/api/orders/ord-1", "/portico.order.v1.OrderService/GetOrder", nil},
		{"HEAD", "/api/orders/ord-1", "/portico.order.v1.OrderService/GetOrder", nil},
		{"POST", "/api/orders/ord-1:cancel", "/portico.order.v1.OrderService/CancelOrder", nil},
		{"GET", "/api/orders/ord-1:cancel", "/portico.order.v1.OrderService/GetOrder", nil},
		{"GET", "/api/orders/", "", []string{}},
		{"PATCH", "/api/inventory/", "", []string{}},
		{"PATCH", "/api/inventory/a", "/portico.inventory.v1.InventoryService/UpdateItem", nil},
		{"POST", "/api/reservations/r:commit", "/portico.inventory.v1.InventoryService/CommitReservation", nil},
		{"POST", "/api/reservations/r:release", "/portico.inventory.v1.InventoryService/ReleaseReservation", nil},
		{"POST", "/api/orders/:cancel", "", []string{"GET", "HEAD"}},
		{"POST", "/api/reservations/r:explode", "", []string{"GET", "HEAD"}},
		{"DELETE", "/api/orders/ord-1", "", []string{"GET", "HEAD"}},
		{"PUT", "/api/orders", "", []string{"GET", "HEAD", "POST"}},
		{"PUT", "/api/orders/o:cancel", "", []string{"GET", "HEAD", "POST"}},
		{"GET", "/api/orders/a/b", "", []string{}},
		{"GET", "/api//orders", "", []string{}},
		{"GET", "/api", "", []string{}},
		{"GET", "relative", "", nil},
	}
	for _, tt := range tests {
		r, allow := tb.Match(tt.method, tt.path)
		got := ""
		if r != nil {
			got = r.RPC
		}
		if got != tt.wantRPC || !slices.Equal(allow, tt.wantAllow) && !(len(allow) == 0 && len(tt.wantAllow) == 0) {
			t.Errorf("Match(%s %s) = %q, %v; want %q, %v", tt.method, tt.path, got, allow, tt.wantRPC, tt.wantAllow)
		}
	}
}

func TestRouteBindings(t *testing.T) {
	tb := table(t)
	r, _ := tb.Match("PATCH", "/api/inventory/a")
	if r.Body != "item" || !slices.Equal(r.Vars, []string{"item.sku"}) || r.BodyMessage().Name() != "Item" {
		t.Errorf("UpdateItem route = body %q vars %v", r.Body, r.Vars)
	}
	if !r.Bound([]string{"item", "name"}) || r.Bound([]string{"update_mask"}) {
		t.Errorf("UpdateItem Bound: item.name must be bound, update_mask not")
	}
	c, _ := tb.Match("POST", "/api/orders")
	if !c.Bound([]string{"payment_method"}) || c.BodyMessage().Name() != "CreateOrderRequest" {
		t.Errorf("CreateOrder: body * binds every field")
	}
	g, _ := tb.Match("GET", "/api/orders/x")
	if g.BodyMessage() != nil || !g.Bound([]string{"id"}) || g.Key() != "GET /api/orders/{id}" {
		t.Errorf("GetOrder route = %+v", g)
	}
}

func TestParseTemplate(t *testing.T) {
	tests := []struct {
		tmpl     string
		path     string
		match    bool
		wantVars []string
		wantErr  bool
	}{
		{"/v1/{name=shelves/*}", "/v1/shelves/s1", true, []string{"name"}, false},
		{"/v1/{name=shelves/*}", "/v1/books/s1", false, []string{"name"}, false},
		{"/v1/{path=**}", "/v1/a/b/c", true, []string{"path"}, false},
		{"/v1/{path=**}", "/v1", true, []string{"path"}, false},
		{"/v1/**/tail", "/v1/a/b/tail", true, nil, false},
		{"/v1/*/x", "/v1/a/x", true, nil, false},
		{"v1", "", false, nil, true},
		{"/v1//x", "", false, nil, true},
		{"/v1/{a}/{b=**}/**", "", false, nil, true},
		{"/v1/{a", "", false, nil, true},
		{"/v1/x:", "", false, nil, true},
	}
	for _, tt := range tests {
		segs, verb, vars, err := parseTemplate(tt.tmpl)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseTemplate(%q) error = %v, want error %v", tt.tmpl, err, tt.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		r := &Route{segs: segs, verb: verb}
		comps := splitPath(tt.path)
		if got := r.matches(comps); got != tt.match || !slices.Equal(vars, tt.wantVars) {
			t.Errorf("parseTemplate(%q) matches %q = %v vars %v; want %v %v", tt.tmpl, tt.path, got, vars, tt.match, tt.wantVars)
		}
	}
}

func splitPath(p string) []string {
	var out []string
	start := 1
	for i := 1; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

func TestNewTableRejectsDuplicates(t *testing.T) {
	inv, _ := FromService(inventoryv1.File_portico_inventory_v1_inventory_proto.Services().ByName("InventoryService"), "a")
	if _, err := NewTable(append(inv, inv[0])); err == nil {
		t.Error("NewTable with a duplicate route = nil error")
	}
}

// TestNewTableCollisions: a route added beside the order service's
// (GetOrder GET /api/orders/{id}, WatchOrder GET /api/orders/{id}:watch,
// ExportOrders GET /api/orders:export, CancelOrder POST
// /api/orders/{id}:cancel, ...) is refused when it has the shape of one of
// them, whatever its variables are called, from another service when
// some path matches both, and from the same service when it leaves an
// earlier route no path; "" wants it accepted.
func TestNewTableCollisions(t *testing.T) {
	ord, err := FromService(orderv1.File_portico_order_v1_order_proto.Services().ByName("OrderService"), "order")
	if err != nil {
		t.Fatal(err)
	}
	const other, same = "/acme.shipping.v1.ShippingService/X", "/portico.order.v1.OrderService/X"
	tests := []struct {
		method, pattern, rpc string
		want                 string // a part of the error, "" for none
	}{
		{"GET", "/api/orders/{name}", other, "GET /api/orders/{name} (acme.shipping.v1.ShippingService/X @ extra) and GET /api/orders/{id} (portico.order.v1.OrderService/GetOrder @ order) are the same route"},
		{"GET", "/api/orders/{name}", same, "are the same route"},
		{"GET", "/api/orders/{id}", other, "are the same route"},
		{"GET", "/api/orders/{name=*}", other, "are the same route"},
		{"GET", "/api/orders/*", other, "are the same route"},
		{"GET", "/api/orders/{name}:watch", same, "WatchOrder @ order) are the same route"},
		{"POST", "/api/orders/{order}:cancel", other, "CancelOrder @ order) are the same route"},
		{"GET", "/api/orders:export", other, "ExportOrders @ order) are the same route"},
		{"GET", "/api/orders/{name=**}", other, "overlaps GET /api/orders/{id} (portico.order.v1.OrderService/GetOrder @ order), a route of another service: both match GET /api/orders/x"},
		{"GET", "/api/{name=**}", other, "overlaps GET /api/orders"},
		{"GET", "/api/{name=orders/*}", other, "are the same route"},
		{"GET", "/api/*/{id}", other, "overlaps GET /api/orders/{id}"},
		{"GET", "/api/orders/{id}:track", other, "both match GET /api/orders/x:track"},
		{"GET", "/api/orders/{id=**}:watch", other, "both match GET /api/orders/x:watch"},
		{"GET", "/api/orders/{name=**}", same, "GET /api/orders/{id} (portico.order.v1.OrderService/GetOrder @ order) is never served: GET /api/orders/{name=**} (portico.order.v1.OrderService/X @ extra), bound after it, matches every path it matches"},
		{"GET", "/api/orders/{name}/{rest=**}", same, "is never served"}, // "**" takes no component too
		{"GET", "/api/orders/{id}:track", same, ""},                      // one service's routes may overlap
		{"GET", "/api/orders/{order_id}/shipment", other, ""},
		{"GET", "/api/orders/{order_id}/items/{n}", other, ""},
		{"DELETE", "/api/orders/{name}", other, ""},
		{"PUT", "/api/orders/{name=**}", other, ""},
		{"GET", "/api/shipments/{id}", other, ""},
		{"GET", "/api/shipments:export", other, ""},
		{"GET", "/api/orderz/{id}", other, ""},
		{"POST", "/api/orders/{id}:ship", other, ""},
		{"POST", "/api/orders:cancel", other, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.pattern+" "+tt.rpc, func(t *testing.T) {
			r := &Route{Method: tt.method, Pattern: tt.pattern, RPC: tt.rpc, Upstream: "extra"}
			_, err := NewTable(append(slices.Clone(ord), r))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("NewTable = %v, want nil", err)
			case tt.want != "" && err == nil:
				t.Fatalf("NewTable = nil, want an error with %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("NewTable = %v, want %q in it", err, tt.want)
			}
		})
	}
}

// TestShape: the shape drops variable names and keeps what they match.
func TestShape(t *testing.T) {
	for pattern, want := range map[string]string{
		"/api/orders/{id}":               "/api/orders/*",
		"/api/orders/{id=*}:cancel":      "/api/orders/*:cancel",
		"/api/{name=shelves/*}/books/**": "/api/shelves/*/books/**",
		"/api/files/{path=**}":           "/api/files/**",
		"/api/inventory/{item.sku}":      "/api/inventory/*",
		"/api/orders:export":             "/api/orders:export",
	} {
		if got := (&Route{Pattern: pattern}).Shape(); got != want {
			t.Errorf("Shape(%s) = %s, want %s", pattern, got, want)
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	tb := table(b)
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := tb.Match("POST", "/api/orders/ord-123:cancel"); r == nil {
			b.Fatal("no match")
		}
	}
}

// FuzzAppendSplit: Match's split is strings.Split(s, "/") for any path,
// past the stack buffer's 16 components too.
func FuzzAppendSplit(f *testing.F) {
	for _, s := range []string{"", "/", "api/inventory/kb-1", "a//b/", strings.Repeat("x/", 20)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf [16]string
		if got, want := appendSplit(buf[:0], s), strings.Split(s, "/"); !slices.Equal(got, want) {
			t.Errorf("appendSplit(%q) = %q, want %q", s, got, want)
		}
	})
}

func TestValues(t *testing.T) {
	tb := table(t)
	tests := []struct {
		method, path string
		want         []string
		wantStream   bool
	}{
		{"GET", "/api/orders/ord-1:watch", []string{"ord-1"}, true},
		{"GET", "/api/orders:export", []string{}, true},
		{"GET", "/api/orders/ord-1", []string{"ord-1"}, false},
		{"PATCH", "/api/inventory/pad-001", []string{"pad-001"}, false},
		{"POST", "/api/reservations/res-1:commit", []string{"res-1"}, false},
	}
	for _, tt := range tests {
		r, _ := tb.Match(tt.method, tt.path)
		if r == nil {
			t.Fatalf("Match(%s %s) = nil", tt.method, tt.path)
		}
		got, ok := r.Values(tt.path)
		if !ok || !slices.Equal(got, tt.want) || r.Stream != tt.wantStream {
			t.Errorf("%s.Values(%q) = %q, %v (stream %v); want %q (stream %v)", r.Pattern, tt.path, got, ok, r.Stream, tt.want, tt.wantStream)
		}
	}
	r, _ := tb.Match("GET", "/api/orders/ord-1:watch")
	if _, ok := r.Values("/api/orders/ord-1"); ok {
		t.Errorf("%s.Values(/api/orders/ord-1) matched without the verb", r.Pattern)
	}
}
