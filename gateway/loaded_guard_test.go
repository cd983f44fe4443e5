package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/protoload"
)

// rogueService is the service rogueSet declares.
const rogueService = "acme.rogue.v1.RogueService"

// rogueSet writes a descriptor set of acme.rogue.v1.RogueService whose
// methods M0, M1, ... each bind one of rules (a GET path, or "METHOD
// path" for a custom method), taking a message with the string fields
// name, id, order_id and path.
func rogueSet(t *testing.T, rules ...string) string {
	t.Helper()
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	var fields []*descriptorpb.FieldDescriptorProto
	for i, name := range []string{"name", "id", "order_id", "path"} {
		fields = append(fields, &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(int32(i + 1)), Type: str,
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), JsonName: proto.String(name)})
	}
	svc := &descriptorpb.ServiceDescriptorProto{Name: proto.String("RogueService")}
	for i, rule := range rules {
		hr := &annotations.HttpRule{Pattern: &annotations.HttpRule_Get{Get: rule}}
		if kind, path, ok := strings.Cut(rule, " "); ok {
			hr.Pattern = &annotations.HttpRule_Custom{Custom: &annotations.CustomHttpPattern{Kind: kind, Path: path}}
		}
		opts := &descriptorpb.MethodOptions{}
		proto.SetExtension(opts, annotations.E_Http, hr)
		svc.Method = append(svc.Method, &descriptorpb.MethodDescriptorProto{Name: proto.String(fmt.Sprintf("M%d", i)),
			InputType: proto.String(".acme.rogue.v1.Req"), OutputType: proto.String(".acme.rogue.v1.Req"), Options: opts})
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("acme/rogue/v1/rogue.proto"), Package: proto.String("acme.rogue.v1"), Syntax: proto.String("proto3"),
		Dependency:  []string{"google/api/annotations.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Req"), Field: fields}},
		Service:     []*descriptorpb.ServiceDescriptorProto{svc},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(protoload.SetOf(fd))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "rogue.binpb")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// withRogue adds the upstream "rogue" serving RogueService from set.
func withRogue(set string) func(*config.Config) {
	return func(c *config.Config) {
		c.Upstreams = append(c.Upstreams, config.UpstreamConfig{Name: "rogue", Addresses: []string{"127.0.0.1:1"},
			Services: []string{rogueService}, Descriptors: set})
	}
}

// TestLoadedRoutesGuarded: a loaded service's binding that collides with
// a built-in route by shape (whatever its variables are called), would take
// paths of another service's route, or lies outside /api (never served;
// the paths there are the edge's own), or leaves an earlier binding of its
// own service no path (rules split on "|") is a config error naming both
// RPCs or the reason; "" wants the bindings accepted.
func TestLoadedRoutesGuarded(t *testing.T) {
	const rogue = "(acme.rogue.v1.RogueService/M0 @ rogue)"
	tests := []struct {
		rule string
		want string
	}{
		{"/api/orders/{name}", "GET /api/orders/{name} " + rogue + " and GET /api/orders/{id} (portico.order.v1.OrderService/GetOrder @ order) are the same route"},
		{"/api/orders/{id}", "are the same route"},
		{"/api/inventory/{name}", "GET /api/inventory/{sku} (portico.inventory.v1.InventoryService/GetItem @ inventory) are the same route"},
		{"/api/orders/{name}:watch", "(portico.order.v1.OrderService/WatchOrder @ order) are the same route"},
		{"POST /api/orders/{name=*}:cancel", "(portico.order.v1.OrderService/CancelOrder @ order) are the same route"},
		{"/api/orders:export", "(portico.order.v1.OrderService/ExportOrders @ order) are the same route"},
		{"/api/orders/{name=**}", "overlaps GET /api/orders/{id} (portico.order.v1.OrderService/GetOrder @ order), a route of another service: both match GET /api/orders/x"},
		{"/api/{path=**}", "a route of another service"},
		{"/api/orders/{name}:track", "both match GET /api/orders/x:track"},
		{"/health", "GET /health (acme.rogue.v1.RogueService/M0) is outside /api: the edge serves REST routes under /api only"},
		{"/healthz/{name}", "is outside /api"},
		{"/openapi.json", "is outside /api"},
		{"/metrics", "is outside /api"},
		{"/problems/{name}", "is outside /api"},
		{"/docs/{path=**}", "is outside /api"},
		{"/v1/things", "is outside /api"},
		{"/apiary/{name}", "is outside /api"},
		{"/api:probe", "is outside /api"},
		{"/{path=**}", "is outside /api"},
		{"/api/rogue/{name}|/api/rogue/{path=**}", "GET /api/rogue/{name} " + rogue + " is never served: GET /api/rogue/{path=**} (acme.rogue.v1.RogueService/M1 @ rogue), bound after it"},
		{"/api/rogue/{name}:watch|/api/rogue/{name}", "is never served"},
		{"/api/rogue/{name}|/api/rogue/{name}:watch", ""},
		{"/api/orders/{order_id}/shipment", ""},
		{"/api/rogue/{name}", ""},
		{"DELETE /api/orders/{name}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			_, err := parseWith(t, t.TempDir(), withRogue(rogueSet(t, strings.Split(tt.rule, "|")...)))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("config.Load = %v, want nil", err)
			case tt.want != "" && err == nil:
				t.Fatalf("config.Load = nil, want an error with %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("config.Load = %v, want %q in it", err, tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), "upstreams[3] (rogue)") && strings.Contains(tt.want, "outside"):
				t.Fatalf("config.Load = %v, want it to name the upstream", err)
			}
		})
	}
}

// TestReloadRefusesShadowingRoute: a reload adding a service whose binding
// has GetOrder's shape is refused naming both RPCs, and the running config
// (its version, route table and GetOrder's answers) stays.
func TestReloadRefusesShadowingRoute(t *testing.T) {
	h := newHarness(t, setup{})
	before := h.srv.snap.Load()
	next := h.cfg
	withRogue(rogueSet(t, "/api/orders/{name}"))(&next)
	_, err := h.srv.Reload(t.Context(), next, SourceAdmin)
	if err == nil || !strings.Contains(err.Error(), "portico.order.v1.OrderService/GetOrder") || !strings.Contains(err.Error(), "acme.rogue.v1.RogueService/M0") {
		t.Fatalf("Reload = %v, want an error naming GetOrder and RogueService/M0", err)
	}
	after := h.srv.snap.Load()
	if after != before || after.version.ID != before.version.ID {
		t.Fatalf("the running config changed: version %s -> %s", before.version.ID, after.version.ID)
	}
	for _, r := range after.table.Routes() {
		if r.Upstream == "rogue" {
			t.Fatalf("the route table holds %s of the refused config", r.Key())
		}
	}
	if rt, _ := after.table.Match("GET", "/api/orders/ord-1"); rt == nil || rt.RPC != "/portico.order.v1.OrderService/GetOrder" {
		t.Fatalf("GET /api/orders/ord-1 routes to %v after the refused reload, want GetOrder", rt)
	}
	if r := h.do("GET", "/api/orders/ord-1", adminToken, ""); strings.Contains(string(r.body), "ROUTE_NOT_FOUND") {
		t.Fatalf("GET /api/orders/ord-1 = %d %s after the refused reload", r.status, r.body)
	}
}
