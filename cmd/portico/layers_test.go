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
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", tt.pkg)
			cmd.Dir = "../.."
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", tt.pkg, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				for _, f := range tt.forbidden {
					if strings.HasPrefix(dep, mod+f) {
						t.Errorf("%s depends on %s", tt.pkg, dep)
					}
				}
			}
		})
	}
}
