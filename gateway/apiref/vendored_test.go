package apiref

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/internal/browsertest"
)

var update = flag.Bool("update", false, "rewrite assets/vendor from tools/browser's pinned swagger-ui-dist")

// browserTools is the folder whose package-lock.json pins swagger-ui-dist.
const browserTools = "../../tools/browser"

// TestVendored proves that assets/vendor holds swagger-ui-dist at
// SwaggerUIVersion, byte for byte (the .gz files uncompressed), the
// version tools/browser/package.json pins; -update rewrites them. It needs
// npm (it installs the lock) and skips, saying so, without it.
func TestVendored(t *testing.T) {
	var pkg struct{ DevDependencies map[string]string }
	readJSON(t, filepath.Join(browserTools, "package.json"), &pkg)
	if got := pkg.DevDependencies["swagger-ui-dist"]; got != SwaggerUIVersion {
		t.Fatalf("tools/browser/package.json pins swagger-ui-dist %q, SwaggerUIVersion is %q", got, SwaggerUIVersion)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not found: skipping the check of the vendored Swagger UI against its npm package")
	}
	nm, err := browsertest.NodeModules(browserTools)
	if err != nil {
		t.Skipf("npm ci of tools/browser failed, skipping the check of the vendored Swagger UI: %v", err)
	}
	dist := filepath.Join(nm, "swagger-ui-dist")
	var installed struct{ Version string }
	readJSON(t, filepath.Join(dist, "package.json"), &installed)
	if installed.Version != SwaggerUIVersion {
		t.Fatalf("installed swagger-ui-dist is %s, want %s", installed.Version, SwaggerUIVersion)
	}
	for _, name := range Vendored {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dist, name))
			if err != nil {
				t.Fatal(err)
			}
			file, compressed := vendorPath(name)
			if *update {
				writeVendored(t, file, want, compressed)
				return
			}
			got, err := assets.ReadFile(filepath.ToSlash(file))
			if err != nil {
				t.Fatalf("%s is not vendored: %v (go test -run TestVendored -update)", name, err)
			}
			if compressed {
				if got, err = gunzip(got); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Errorf("assets/vendor's %s differs from swagger-ui-dist %s's (go test ./gateway/apiref -run TestVendored -update)", name, SwaggerUIVersion)
			}
		})
	}
}

// vendorPath is where a vendored file lives in the tree: the scripts and
// stylesheets gzip-compressed.
func vendorPath(name string) (string, bool) {
	if strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".css") {
		return filepath.Join("assets", "vendor", name+".gz"), true
	}
	return filepath.Join("assets", "vendor", name), false
}

func writeVendored(t *testing.T, file string, b []byte, compressed bool) {
	t.Helper()
	if compressed {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // no name, no time: the same bytes each run
		_, _ = w.Write(b)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b = buf.Bytes()
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}
