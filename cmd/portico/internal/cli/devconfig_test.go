package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
)

// TestDevConfigPathsAreRelativeToTheFile: the edge config dev writes names
// its keys file relative to the config's own directory, where the edge
// resolves it, so the file loads from any working directory.
func TestDevConfigPathsAreRelativeToTheFile(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	keys, err := writeDevKeys("var")
	if err != nil {
		t.Fatal(err)
	}
	cfgPath, err := writeDevConfig("var", 43100, "", keys)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "keys_file: identity.keys\n") {
		t.Errorf("%s names the keys file as\n%s\nwant keys_file: identity.keys", cfgPath, b)
	}
	t.Chdir(t.TempDir())
	cfg, err := config.Load(filepath.Join(root, cfgPath), gateway.CheckRoutes)
	if err != nil {
		t.Fatalf("config.Load from another directory: %v", err)
	}
	if want := filepath.Join(root, "var", "identity.keys"); cfg.Identity.KeysFile != want {
		t.Errorf("identity.keys_file = %q, want %q", cfg.Identity.KeysFile, want)
	}
}
