package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsPointDown checks the layering: cmd -> gateway -> interceptors
// -> internal leaves, with the services beside the gateway. A lower layer
// never imports a higher one.
func TestImportsPointDown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/portico-gateway/portico/"
	tests := []struct {
		pkg       string
		forbidden []string // import path prefixes under mod
	}{
		{"./gateway/...", []string{"cmd/", "services/"}},
		{"./interceptors/...", []string{"cmd/", "gateway", "services/"}},
		{"./services/...", []string{"cmd/", "gateway"}},
		{"./internal/callmeta", []string{"cmd/", "gateway", "services/", "interceptors"}},
		{"./internal/logging", []string{"cmd/", "gateway", "services/", "interceptors"}},
		{"./internal/rpcerr", []string{"cmd/", "gateway", "services/", "interceptors"}},
		{"./internal/sqlitedb", []string{"cmd/", "gateway", "services/", "interceptors"}},
		{"./internal/traceid", []string{"cmd/", "gateway", "services/", "interceptors"}},
		{"./internal/grpcserver", []string{"cmd/", "gateway", "services/"}},
	}
	deps := moduleDeps(t)
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			matched := false
			for pkg, pkgDeps := range deps {
				if !matches(tt.pkg, pkg, mod) {
					continue
				}
				matched = true
				for _, dep := range pkgDeps {
					for _, f := range tt.forbidden {
						if strings.HasPrefix(dep, mod+f) {
							t.Errorf("%s depends on %s", pkg, dep)
						}
					}
				}
			}
			if !matched {
				t.Fatalf("no package matches %s", tt.pkg)
			}
		})
	}
}

// moduleDeps runs go list once and maps each of the module's packages to
// itself and every package it depends on (what go list -deps prints for it).
func moduleDeps(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps[f[0]] = f
	}
	return deps
}

// matches reports whether the import path pkg is matched by pattern, a
// relative package path that may end in /... (as go list reads it).
func matches(pattern, pkg, mod string) bool {
	path := mod + strings.TrimPrefix(pattern, "./")
	if base, ok := strings.CutSuffix(path, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == path
}
