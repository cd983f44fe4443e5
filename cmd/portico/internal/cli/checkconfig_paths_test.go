package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/gateway/config"
)

var summaryVersion = regexp.MustCompile(`(?m)^version\s+([0-9a-f]+)$`)

// TestCheckConfigVersionOfSpellings: the version check-config prints for
// a file whose descriptors are a relative path is the same whether the
// file is named from its directory, through a relative directory or
// absolutely (as the live edge names it); --diff-against the same file
// spelled otherwise shows no change; a missing relative file is named by
// its resolved path.
func TestCheckConfigVersionOfSpellings(t *testing.T) {
	set, err := os.ReadFile("../../../../examples/shipping/shipping.binpb")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dev := filepath.Join(root, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dev, "shipping.binpb"), set, 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, descriptors string) string {
		c := config.Dev(43100)
		c.Upstreams = append(c.Upstreams, config.UpstreamConfig{Name: "shipping", Addresses: []string{"127.0.0.1:43150"},
			Services: []string{"acme.shipping.v1.ShippingService"}, Descriptors: descriptors})
		b, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dev, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	abs := write("gateway.dev.yaml", "shipping.binpb")
	run := func(cwd string, args ...string) (string, string, int) {
		t.Helper()
		t.Chdir(cwd)
		var out, errb bytes.Buffer
		code := Main(append([]string{"check-config"}, args...), &out, &errb)
		return out.String(), errb.String(), code
	}
	versions := map[string]string{}
	for _, sp := range []struct{ cwd, path string }{{dev, "gateway.dev.yaml"}, {root, "./dev/gateway.dev.yaml"}, {"/", abs}} {
		out, errs, code := run(sp.cwd, sp.path)
		if code != 0 {
			t.Fatalf("check-config %s in %s: exit %d: %s", sp.path, sp.cwd, code, errs)
		}
		m := summaryVersion.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no version in:\n%s", out)
		}
		versions[m[1]] = sp.path
	}
	if len(versions) != 1 {
		t.Errorf("one file, %d versions by spelling: %v", len(versions), versions)
	}

	out, errs, code := run(dev, "--diff-against", abs, "gateway.dev.yaml")
	if code != 0 || !strings.Contains(out, "(0):\n  none") {
		t.Errorf("--diff-against the same file spelled otherwise: exit %d, %s\n%s", code, errs, out)
	}

	write("missing.yaml", "../missing.binpb")
	_, errs, code = run(dev, "missing.yaml")
	if want := filepath.Join(root, "missing.binpb"); code == 0 || !strings.Contains(errs, want) {
		t.Errorf("a missing ../missing.binpb: exit %d, stderr lacks %q:\n%s", code, want, errs)
	}
}
