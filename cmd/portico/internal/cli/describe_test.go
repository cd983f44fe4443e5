package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

var version = regexp.MustCompile(`config version [0-9a-f]+`)

// TestDescribe: `portico describe --config FILE` (or FILE) prints the route table
// of the dev config (golden: every built-in route with its RPC, upstream,
// roles, limit group and timeout) and of a config adding a service
// loaded from a descriptor set (examples/shipping's), whose routes join
// the table; --json prints the same rows as /admin/routes.
func TestDescribe(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, c config.Config) string {
		b, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	describe := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(append([]string{"describe"}, args...), &out, &errb); code != 0 {
			t.Fatalf("describe %v = %d: %s", args, code, errb.String())
		}
		return out.String()
	}

	dev := write("dev.yaml", config.Dev(43100))
	// the version is the config's digest: any new default changes it
	got := version.ReplaceAllString(describe("--config", dev), "config version V")
	golden := filepath.Join("testdata", "describe_dev.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("describe on the dev config:\n%s\nwant (%s; -update rewrites it):\n%s", got, golden, want)
	}

	// check-config prints the same route table (one printer).
	var checked, errb bytes.Buffer
	if code := Main([]string{"check-config", dev}, &checked, &errb); code != 0 {
		t.Fatalf("check-config: exit %d: %s", code, errb.String())
	}
	if routes, _, _ := strings.Cut(got, "\n\n"); !strings.Contains(checked.String(), routes) {
		t.Errorf("check-config's route table is not describe's:\n%s\nwant within it:\n%s", checked.String(), routes)
	}

	set, err := filepath.Abs("../../../../examples/shipping/shipping.binpb")
	if err != nil {
		t.Fatal(err)
	}
	withShipping := config.Dev(43100)
	withShipping.Upstreams = append(withShipping.Upstreams, config.UpstreamConfig{Name: "shipping",
		Addresses: []string{"127.0.0.1:43150"}, Services: []string{"acme.shipping.v1.ShippingService"}, Descriptors: set})
	loaded := write("shipping.yaml", withShipping)
	table := describe("--config", loaded)
	for _, line := range []string{
		"POST /api/orders                     portico.order.v1.OrderService/CreateOrder",
		"POST /api/shipments                  acme.shipping.v1.ShippingService/CreateShipment",
		"GET /api/orders/{order_id}/shipment  acme.shipping.v1.ShippingService/GetShipment",
		"POST /api/shipments/{id}:dispatch    acme.shipping.v1.ShippingService/DispatchShipment",
	} {
		if !strings.Contains(table, line) {
			t.Errorf("describe with shipping lacks %q:\n%s", line, table)
		}
	}
	if n := strings.Count(table, "\n") - strings.Count(got, "\n"); n != 6 {
		t.Errorf("describe with shipping has %d more lines than the dev config's, want 6 (shipping's routes and upstream)", n)
	}
	if positional := describe(loaded); positional != table { // FILE as the argument, as check-config takes it
		t.Errorf("describe FILE differs from describe --config FILE:\n%s", positional)
	}
	var raw struct {
		Routes []map[string]any `json:"routes"`
	}
	if err := json.Unmarshal([]byte(describe("--json", loaded)), &raw); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"limitGroup", "shedGroup", "rpc", "timeout"} {
		if _, ok := raw.Routes[0][field]; !ok {
			t.Errorf("--json: a route lacks %q: %v", field, raw.Routes[0])
		}
	}
	var rows gateway.RouteTable
	if err := json.Unmarshal([]byte(describe("--config", loaded, "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows.Routes {
		if r.Path == "/api/orders" && r.Method == "POST" && r.LimitGroup != "order-writes" {
			t.Errorf("--json: POST /api/orders has limit group %q, want order-writes", r.LimitGroup)
		}
	}
	if len(rows.Routes) != 23 || rows.Version == "" {
		t.Errorf("--json: %d routes, version %q; want 23 and a version", len(rows.Routes), rows.Version)
	}
}
