package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/interceptors/identity"
)

// TestIdentityCommand: `portico identity` prints an assertion the named
// service's verifier accepts, and refuses to run without what it needs.
func TestIdentityCommand(t *testing.T) {
	keys, err := identity.NewKeys(identity.GenerateKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "identity.keys")
	if err := os.WriteFile(file, []byte(keys.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main([]string{"identity", "--keys", file, "--service", "portico.order.v1.OrderService", "--subject", "alice"}, &out, &errb)
	if code != 0 {
		t.Fatalf("portico identity = %d, stderr %q", code, errb.String())
	}
	v, _ := identity.NewVerifier(keys, "portico.order.v1.OrderService")
	c, err := v.Verify(strings.TrimSpace(out.String()))
	if err != nil || c.Subject != "alice" || c.Role != "customer" {
		t.Fatalf("printed assertion verifies as %+v, %v; want alice, customer", c, err)
	}
	t.Setenv(identity.EnvKeysFile, "")
	t.Setenv(identity.EnvKeys, "")
	for _, args := range [][]string{
		{"identity", "--keys", file, "--subject", "alice"},
		{"identity", "--service", "portico.order.v1.OrderService", "--subject", "alice"},
	} {
		if code := Main(args, &out, &errb); code != 2 {
			t.Errorf("portico %v = %d, want 2", args, code)
		}
	}
}
