package gateway

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"google.golang.org/protobuf/proto"

	"github.com/portico-gateway/portico/gateway/apidoc"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/protoload"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// builtInServices maps each built-in upstream to its service.
var builtInServices = map[string]string{
	"inventory": "portico.inventory.v1.InventoryService",
	"payment":   "portico.payment.v1.PaymentService",
	"order":     "portico.order.v1.OrderService",
}

// shopSet is the FileDescriptorSet of the shop's protos and their
// imports, as `buf build -o` writes it, in a file shared by the tests.
var shopSet = sync.OnceValues(func() (string, error) {
	set := protoload.SetOf(inventoryv1.File_portico_inventory_v1_inventory_proto,
		paymentv1.File_portico_payment_v1_payment_proto, orderv1.File_portico_order_v1_order_proto)
	b, err := proto.Marshal(set)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "portico-shopset")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "shop.binpb")
	return p, os.WriteFile(p, b, 0o600)
})

// toDescriptors moves every built-in upstream of cfg to the descriptor
// path: services and a descriptor set, or reflection.
func toDescriptors(t testing.TB, cfg *config.Config, reflection bool) {
	t.Helper()
	set, err := shopSet()
	if err != nil {
		t.Fatal(err)
	}
	for i, up := range cfg.Upstreams {
		svc, ok := builtInServices[up.Name]
		if !ok {
			continue
		}
		cfg.Upstreams[i].Services = []string{svc}
		if reflection {
			cfg.Upstreams[i].Reflection = true
		} else {
			cfg.Upstreams[i].Descriptors = set
		}
	}
}

// descriptorPath is set by PORTICO_TEST_DESCRIPTORS=1 (or =reflection):
// every harness serves the built-in upstreams from descriptors, so the
// whole package's suite runs on the descriptor path.
var descriptorPath = os.Getenv("PORTICO_TEST_DESCRIPTORS")

// parseWith loads config.Dev changed by edit, as a file in dir.
func parseWith(t *testing.T, dir string, edit func(*config.Config)) (config.Config, error) {
	t.Helper()
	c := config.Dev(0)
	edit(&c)
	b, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Load(path, CheckRoutes)
}

// TestLoadedServicesConfigErrors: every way a run-time service can be
// wrong is a config error (check-config and reload) naming the upstream
// and the file or service; a good one loads and routes.
func TestLoadedServicesConfigErrors(t *testing.T) {
	set, err := shopSet()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "corrupt.binpb"), []byte("\x0a\xff\xff"), 0o600); err != nil {
		t.Fatal(err)
	}
	extra := func(services []string, descriptors string, reflection bool) func(*config.Config) {
		return func(c *config.Config) {
			c.Upstreams = append(c.Upstreams, config.UpstreamConfig{Name: "extra", Addresses: []string{"127.0.0.1:1"},
				Services: services, Descriptors: descriptors, Reflection: reflection})
		}
	}
	tests := []struct {
		name    string
		edit    func(*config.Config)
		wantErr []string // "" for none
	}{
		{"inventory moved to its descriptors", func(c *config.Config) {
			c.Upstreams[0].Services, c.Upstreams[0].Descriptors = []string{builtInServices["inventory"]}, set
		}, nil},
		{"missing file", extra([]string{"acme.X"}, "none.binpb", false), []string{"upstreams[3] (extra)", "none.binpb", "no such file"}},
		{"corrupt file", extra([]string{"acme.X"}, "corrupt.binpb", false), []string{"upstreams[3] (extra)", "corrupt.binpb", "corrupt or truncated"}},
		{"service absent", extra([]string{"acme.shipping.v1.ShippingService"}, set, false), []string{"upstreams[3] (extra)", "service not found: acme.shipping.v1.ShippingService"}},
		{"no source", extra([]string{"acme.X"}, "", false), []string{"upstreams[3].services", "descriptors: FILE or reflection: true"}},
		{"both sources", extra([]string{"acme.X"}, set, true), []string{"upstreams[3].reflection", "not both"}},
		{"no services", extra(nil, set, false), []string{"upstreams[3].services", "name the services"}},
		{"bad name", extra([]string{"Shipping Service"}, set, false), []string{"upstreams[3].services[0]", "full name"}},
		{"reflection down", extra([]string{"acme.X"}, "", true), []string{"upstreams[3] (extra)", "server reflection"}},
		{"route bound twice", extra([]string{builtInServices["inventory"]}, set, false), []string{
			"GET /api/inventory/{sku} (portico.inventory.v1.InventoryService/GetItem @ extra) and GET /api/inventory/{sku} (portico.inventory.v1.InventoryService/GetItem @ inventory) are the same route"}},
	}
	old := reflectionLimits
	reflectionLimits.Timeout = 2 * time.Second // a closed port fails at once; bound it anyway
	t.Cleanup(func() { reflectionLimits = old })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseWith(t, dir, tt.edit)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("config.Load = %v", err)
				}
				routes, err := Routes(c)
				if err != nil || len(routes) == 0 {
					t.Fatalf("Routes = %d, %v", len(routes), err)
				}
				return
			}
			if err == nil {
				t.Fatal("config.Load = nil error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestOpenAPIFollowsLoadedServices: /openapi.json gains the operations of
// a loaded service (examples/shipping's descriptor set) generated by the
// built-in rules: buf.validate constraints, comments, Location and
// rate-limit headers, problem responses.
func TestOpenAPIFollowsLoadedServices(t *testing.T) {
	set, err := filepath.Abs(filepath.Join("..", "examples", "shipping", "shipping.binpb"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Upstreams = append(c.Upstreams, config.UpstreamConfig{Name: "shipping", Addresses: []string{"127.0.0.1:1"},
			Services: []string{"acme.shipping.v1.ShippingService"}, Descriptors: set})
	}})
	r := h.do("GET", "/openapi.json", "", "")
	if r.status != 200 {
		t.Fatalf("GET /openapi.json = %d", r.status)
	}
	if err := apidoc.Validate(r.body); err != nil {
		t.Fatalf("served document: %v", err)
	}
	if out := os.Getenv("PORTICO_OPENAPI_OUT"); out != "" { // for make lint-openapi's linters
		if err := os.WriteFile(out, r.body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	body := string(r.body)
	if !strings.Contains(body, `"/api/shipments"`) {
		t.Fatalf("no /api/shipments; log:\n%s", h.logs.String())
	}
	for _, want := range []string{`"/api/shipments"`, `"#/components/headers/Location"`, `"Shipment"`, `"ShippingService"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the document lacks %s", want)
		}
	}
	paths := doc["paths"].(map[string]any)
	create, _ := paths["/api/shipments"].(map[string]any)["post"].(map[string]any)
	out, _ := json.Marshal(create)
	for _, want := range []string{`"201"`, `"409"`, `RateLimit`, `"description":`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("POST /api/shipments lacks %s: %s", want, out)
		}
	}
	list, _ := json.Marshal(paths["/api/shipments"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)["200"])
	if !strings.Contains(string(list), `"type":"array"`) {
		t.Errorf("GET /api/shipments (response_body: shipments) is not documented as the array the edge sends: %s", list)
	}
	get, _ := json.Marshal(paths["/api/shipments/{id}"].(map[string]any)["get"])
	for _, want := range []string{`"operationId":"getShipment"`, "Roles (built-in policy;"} { // the dev config has no auth.policy
		if !strings.Contains(string(get), want) {
			t.Errorf("GET /api/shipments/{id} lacks %s: %s", want, get)
		}
	}
	loadedRoles(t, h, paths, "Roles (built-in policy;") // the dev config has no auth.policy
	schemas, _ := json.Marshal(doc["components"].(map[string]any)["schemas"])
	if !strings.Contains(string(schemas), `"maxLength"`) && !strings.Contains(string(schemas), `"pattern"`) && !strings.Contains(string(schemas), `"minLength"`) {
		t.Errorf("no buf.validate constraint in the schemas")
	}
}

// TestOpenAPILoadedStatesPolicy: with an auth.policy, a loaded service's
// operations, its additional binding's too, state the configured roles.
func TestOpenAPILoadedStatesPolicy(t *testing.T) {
	set, err := filepath.Abs(filepath.Join("..", "examples", "shipping", "shipping.binpb"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Upstreams = append(c.Upstreams, config.UpstreamConfig{Name: "shipping", Addresses: []string{"127.0.0.1:1"},
			Services: []string{"acme.shipping.v1.ShippingService"}, Descriptors: set})
		c.Auth.Policy = []config.PolicyRuleConfig{
			{Roles: []string{"admin"}, Allow: []string{"/api/**"}},
			{Roles: []string{"reader", "customer"}, Allow: []string{"GET /api/inventory/**"}},
			{Roles: []string{"shipper"}, Allow: []string{"acme.shipping.v1.ShippingService/GetShipment"}},
		}
	}})
	var doc map[string]any
	if err := json.Unmarshal(h.do("GET", "/openapi.json", "", "").body, &doc); err != nil {
		t.Fatal(err)
	}
	loadedRoles(t, h, doc["paths"].(map[string]any), "Roles (this deployment's `auth.policy`): ")
}

// loadedRoles checks that each operation of the shipping routes states
// the roles the edge applies (x-portico-roles) and says whose they are
// (note, in the description).
func loadedRoles(t *testing.T, h *harness, paths map[string]any, note string) {
	t.Helper()
	sn := h.srv.snap.Load()
	for _, rt := range sn.table.Routes() {
		if rt.Upstream != "shipping" {
			continue
		}
		var op map[string]any // the document names variables by their JSON names
		for p, item := range paths {
			if pathVars.ReplaceAllString(p, "{}") == pathVars.ReplaceAllString(rt.Template, "{}") {
				op, _ = item.(map[string]any)[strings.ToLower(rt.Method)].(map[string]any)
			}
		}
		got, _ := json.Marshal(op["x-portico-roles"])
		want, _ := json.Marshal(sn.policy.Roles(rt))
		desc, _ := op["description"].(string)
		if string(got) != string(want) || !strings.Contains(desc, note) {
			t.Errorf("%s %s: x-portico-roles %s, description %q; want %s and %q", rt.Method, rt.Template, got, desc, want, note)
		}
	}
}

// TestOpenAPIDescriptorParity: the built-in upstreams moved to the
// descriptor path document the same operations as the generated
// document, descriptions aside (the set the tests build from the
// compiled-in descriptors has no source info, hence no comments).
func TestOpenAPIDescriptorParity(t *testing.T) {
	ops := func(h *harness) map[string]any {
		r := h.do("GET", "/openapi.json", "", "")
		var doc map[string]any
		if err := json.Unmarshal(r.body, &doc); err != nil {
			t.Fatal(err)
		}
		return stripDescriptions(doc["paths"]).(map[string]any)
	}
	gen := ops(newHarness(t, setup{}))
	desc := ops(newHarness(t, setup{cfg: func(c *config.Config) { toDescriptors(t, c, false) }}))
	for p, item := range gen {
		for m, op := range item.(map[string]any) {
			other, _ := desc[p].(map[string]any)
			a, _ := json.Marshal(op)
			b, _ := json.Marshal(other[m])
			if !bytes.Equal(a, b) {
				t.Errorf("%s %s differs:\ngenerated:   %s\ndescriptors: %s", m, p, a, b)
			}
		}
	}
	if len(gen) != len(desc) {
		t.Errorf("paths: %d generated, %d from descriptors", len(gen), len(desc))
	}
}

// stripDescriptions returns v without its description members, at any depth.
func stripDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "description")
		for k, e := range x {
			x[k] = stripDescriptions(e)
		}
	case []any:
		for i, e := range x {
			x[i] = stripDescriptions(e)
		}
	}
	return v
}
