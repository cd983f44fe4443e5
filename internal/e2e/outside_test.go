package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/testproc"
)

// buildShipping builds examples/shipping, a module of its own that
// Portico does not import, with go build in its directory.
func buildShipping(t *testing.T) (bin, dir string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir = filepath.Join(filepath.Dir(file), "..", "..", "examples", "shipping")
	bin = filepath.Join(testproc.TempDir(t), "shipping")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build examples/shipping: %v\n%s", err, out)
	}
	return bin, dir
}

// TestOutsideServiceByReload: the example shipping service, started as a
// process, joins a running edge by a reload (SIGHUP), first from its
// descriptor set and then by server reflection, and is served through
// REST with the edge's behaviour: 201 + Location and a required
// Idempotency-Key whose retry replays, from its edge option, a GET and its
// additional binding, a list answered by response_body with short enum
// names, a custom verb, a 400 naming the bad
// field, 404 for a route it does not declare, and once it is killed 502
// problems, then 503 with Retry-After when the breaker opens.
func TestOutsideServiceByReload(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	shipBin, shipDir := buildShipping(t)
	c := startCluster(t)
	shipAddr := testproc.Addr(testproc.FreePort(t))
	ship := testproc.Start(t, shipBin, "shipping", "-listen", shipAddr)
	testproc.WaitServing(t, ship, shipAddr)
	e := startEdge(t, c, "", nil)
	if r := call(t, "GET", e.url+"/api/shipments/shp-1", "demo-admin-token", ""); r.status != 404 {
		t.Fatalf("before the reload GET /api/shipments/shp-1 = %d, want 404", r.status)
	}

	set, err := os.ReadFile(filepath.Join(shipDir, "shipping.binpb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "shipping.binpb"), set, 0o600); err != nil {
		t.Fatal(err)
	}
	listen := strings.TrimPrefix(e.url, "http://")
	shipping := "  - name: shipping\n    addresses: [" + shipAddr + "]\n    services: [acme.shipping.v1.ShippingService]\n"
	reload := func(source string, nth int) {
		t.Helper()
		path := filepath.Join(c.dir, "gateway.yaml")
		cfg := strings.Replace(edgeConfig(c, listen, "", nil), "auth:\n", shipping+source+"auth:\n", 1)
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "check-config", path).CombinedOutput(); err != nil || !strings.Contains(string(out), "/api/shipments/{id}:dispatch") {
			t.Fatalf("check-config = %v\n%s", err, out)
		}
		if err := syscall.Kill(e.proc.Pid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		if !e.proc.WaitOutput(t.Context(), 15*time.Second, func(o string) bool {
			return len(records(o, func(r map[string]any) bool { return r["msg"] == "config audit" && r["event"] == "applied" })) >= nth
		}) {
			t.Fatalf("edge never applied reload %d:\n%s", nth, e.proc.Output())
		}
	}
	reload("    descriptors: shipping.binpb\n", 1)
	if !strings.Contains(e.proc.Output(), "+ route: POST /api/shipments (acme.shipping.v1.ShippingService/CreateShipment @ shipping)") {
		t.Errorf("the reload's audit does not list the added routes:\n%s", e.proc.Output())
	}

	const shipment = `{"orderId":"ord-1","postalCode":"12345"}`
	if r := call(t, "POST", e.url+"/api/shipments", "demo-admin-token", shipment); r.status != 400 {
		t.Fatalf("POST /api/shipments without Idempotency-Key = %d %s, want 400 (idempotency_key: true)", r.status, r.body)
	}
	created := call(t, "POST", e.url+"/api/shipments", "demo-admin-token", shipment, "Idempotency-Key: ship-1")
	if created.status != 201 || created.header.Get("Location") != "/api/shipments/shp-1" || !strings.Contains(string(created.body), `"state":"BOOKED"`) {
		t.Fatalf("POST /api/shipments = %d Location %q %s", created.status, created.header.Get("Location"), created.body)
	}
	// A retry with the same key replays the first answer; the key with
	// another body is 422, another key for the same order 409.
	again := call(t, "POST", e.url+"/api/shipments", "demo-admin-token", shipment, "Idempotency-Key: ship-1")
	if again.status != 201 || again.header.Get("Location") != "/api/shipments/shp-1" || again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(created.body) {
		t.Errorf("retry with the same Idempotency-Key = %d Location %q Idempotent-Replayed %q %s, want the first answer replayed: %s",
			again.status, again.header.Get("Location"), again.header.Get("Idempotent-Replayed"), again.body, created.body)
	}
	for _, tt := range []struct {
		key, body string
		status    int
	}{
		{"ship-1", `{"orderId":"ord-1","postalCode":"54321"}`, 422},
		{"ship-2", shipment, 409},
	} {
		r := call(t, "POST", e.url+"/api/shipments", "demo-admin-token", tt.body, "Idempotency-Key: "+tt.key)
		if r.status != tt.status {
			t.Errorf("POST %s with Idempotency-Key %s = %d %s, want %d", tt.body, tt.key, r.status, r.body, tt.status)
		}
		checkProblem(t, r, "/api/shipments")
	}
	for _, path := range []string{"/api/shipments/shp-1", "/api/orders/ord-1/shipment"} {
		if r := call(t, "GET", e.url+path, "demo-admin-token", ""); r.status != 200 || !strings.Contains(string(r.body), `"id":"shp-1"`) {
			t.Errorf("GET %s = %d %s", path, r.status, r.body)
		}
	}
	bad := call(t, "POST", e.url+"/api/shipments", "demo-admin-token", `{"orderId":"ord-2","postalCode":"abc"}`, "Idempotency-Key: ship-3")
	if bad.status != 400 || !strings.Contains(string(bad.body), `"field":"postalCode"`) {
		t.Errorf("bad postal code = %d %s, want 400 naming postalCode", bad.status, bad.body)
	}
	checkProblem(t, bad, "/api/shipments")
	if r := call(t, "GET", e.url+"/api/shipments/shp-1/labels", "demo-admin-token", ""); r.status != 404 {
		t.Errorf("undeclared route = %d %s, want 404", r.status, r.body)
	}

	reload("    reflection: true\n", 2)
	dispatched := call(t, "POST", e.url+"/api/shipments/shp-1:dispatch", "demo-admin-token", `{"carrier":"dhl"}`)
	if dispatched.status != 200 || !strings.Contains(string(dispatched.body), `"state":"DISPATCHED"`) {
		t.Fatalf("dispatch (by reflection) = %d %s", dispatched.status, dispatched.body)
	}
	// response_body: the list itself, its enums as short as in the other answers
	if r := call(t, "GET", e.url+"/api/shipments", "demo-admin-token", ""); r.status != 200 || !strings.HasPrefix(string(r.body), `[{"id":"shp-1"`) || !strings.Contains(string(r.body), `"state":"DISPATCHED"`) {
		t.Errorf("GET /api/shipments (response_body: shipments) = %d %s", r.status, r.body)
	}

	// Killed: 502 UPSTREAM_UNAVAILABLE while the breaker counts, then 503
	// CIRCUIT_OPEN with Retry-After, as for a built-in upstream.
	ship.Kill()
	var gone reply
	for range 30 {
		gone = call(t, "GET", e.url+"/api/shipments/shp-1", "demo-admin-token", "")
		checkProblem(t, gone, "/api/shipments/shp-1")
		if gone.status != 502 && gone.status != 503 {
			t.Fatalf("service killed: GET = %d %s, want 502 or 503", gone.status, gone.body)
		}
		if gone.header.Get("Retry-After") != "" {
			break
		}
	}
	if gone.status != 503 || gone.header.Get("Retry-After") == "" {
		t.Errorf("service killed: last GET = %d Retry-After %q %s, want 503 with Retry-After once the breaker opens", gone.status, gone.header.Get("Retry-After"), gone.body)
	}
}
