package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portico-gateway/portico/internal/browsertest"
	"github.com/portico-gateway/portico/internal/testproc"
)

// Bounds of the client steps. The first run compiles oapi-codegen and
// installs the npm packages; the flows themselves are a dozen calls on
// loopback.
const (
	buildTimeout = 5 * time.Minute
	flowTimeout  = time.Minute
)

// TestClients generates typed clients from the /openapi.json a real
// `portico dev` serves, as a consumer would, and runs the same flow with
// each (testdata/goclient, testdata/tsclient): list the inventory, create
// an order with an Idempotency-Key, replay it (Idempotent-Replayed: true,
// the same order), read it, cancel it, and decode a 404 and a 422 problem
// into the typed Problem. The Go client comes from oapi-codegen (pinned in
// tools/go.mod), the TypeScript one from openapi-typescript and
// openapi-fetch (pinned in testdata/tsclient/package-lock.json; see
// nodeModules); the TypeScript half skips without npx.
func TestClients(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes and generates clients")
	}
	base := testproc.FreePortRange(t, 10) // portico dev uses base..base+9 (admin listeners at base+4..7)
	dev := testproc.Start(t, bin, "dev", "dev", "--base-port", itoa(base), "--data", testproc.TempDir(t))
	url := "http://" + testproc.Addr(base)
	testproc.WaitHTTP(t, dev, url+"/health")
	testproc.WaitDevReady(t, dev)
	spec := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(spec, fetchOpenAPI3(t, url), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("go", func(t *testing.T) {
		t.Parallel()
		goClientFlow(t, spec, url)
	})
	t.Run("typescript", func(t *testing.T) {
		t.Parallel()
		tsClientFlow(t, spec, url)
	})
}

// fetchOpenAPI3 returns the edge's /openapi.json, checked to be a valid
// OpenAPI 3.0 document.
func fetchOpenAPI3(t *testing.T, url string) []byte {
	t.Helper()
	r := call(t, "GET", url+"/openapi.json", "", "")
	if r.status != 200 {
		t.Fatalf("GET /openapi.json = %d %s", r.status, r.body)
	}
	doc := r.body
	loaded, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		t.Fatalf("/openapi.json: %v", err)
	}
	if !strings.HasPrefix(loaded.OpenAPI, "3.0.") {
		t.Fatalf("/openapi.json is OpenAPI %q, want 3.0.x (oapi-codegen reads no 3.1)", loaded.OpenAPI)
	}
	if err := loaded.Validate(t.Context()); err != nil {
		t.Fatalf("/openapi.json is not valid OpenAPI 3: %v", err)
	}
	return doc
}

// goClientFlow generates the Go client into a copy of testdata/goclient (a
// module of its own, whose go.sum pins oapi-codegen/runtime, so the build
// needs only the module cache), builds the flow and runs it.
func goClientFlow(t *testing.T, spec, url string) {
	dir := copyTestdata(t, "goclient")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"GOWORK=off", "GOFLAGS=-mod=readonly"}
	run(t, root, buildTimeout, env, "go", "tool", "-modfile=tools/go.mod", "oapi-codegen",
		"-config", filepath.Join(dir, "oapi-codegen.yaml"), "-o", filepath.Join(dir, "portico", "client.gen.go"), spec)
	run(t, dir, buildTimeout, env, "go", "build", "-o", "flow", ".")
	t.Log(run(t, dir, flowTimeout, nil, filepath.Join(dir, "flow"), url, "go-client-order"))
}

// tsClientFlow links the pinned packages (nodeModules) into a copy of
// testdata/tsclient, generates schema.d.ts, type-checks and compiles the
// flow with tsc and runs it with node.
func tsClientFlow(t *testing.T, spec, url string) {
	for _, tool := range []string{"npx", "npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: skipping the TypeScript client (it needs Node.js 20 or later with npm)", tool)
		}
	}
	dir := copyTestdata(t, "tsclient")
	if err := os.Symlink(nodeModules(t, dir), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	run(t, dir, buildTimeout, nil, "npx", "--no", "--", "openapi-typescript", spec, "-o", "schema.d.ts")
	run(t, dir, buildTimeout, nil, "npx", "--no", "--", "tsc", "-p", ".")
	t.Log(run(t, dir, flowTimeout, nil, "node", filepath.Join("out", "flow.js"), url, "ts-client-order"))
}

// nodeModules returns a node_modules directory holding exactly what
// tsclient's package-lock.json pins, kept across runs in the user's cache
// (browsertest.NodeModules).
func nodeModules(t *testing.T, tsclient string) string {
	t.Helper()
	nm, err := browsertest.NodeModules(tsclient)
	if err != nil {
		t.Fatal(err)
	}
	return nm
}

// copyTestdata copies the files of testdata/name into a fresh directory.
func copyTestdata(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// run runs name with args in dir, with extra environment variables, killed
// after timeout; it fails the test with the output when the command fails.
func run(t *testing.T, dir string, timeout time.Duration, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v (after %s)\n%s", name, strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond), out.String())
	}
	t.Logf("%s %s: %s", filepath.Base(name), strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return out.String()
}
