package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/portico-gateway/portico/interceptors/identity"
)

// TestLoadConfigResolvesRelativePaths: a config file's relative paths name
// files beside it, whatever the working directory (as Prometheus reads
// its config); absolute ones are kept.
func TestLoadConfigResolvesRelativePaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	if err := os.MkdirAll(filepath.Join(dir, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(dir, "keys", "identity.keys")
	if err := os.WriteFile(keys, []byte(identity.GenerateKey("k1").String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const ups = "upstreams:\n  - {name: inventory, addresses: [127.0.0.1:1]}\n  - {name: payment, addresses: [127.0.0.1:2]}\n  - {name: order, addresses: [127.0.0.1:3]}\n"
	tests := []struct {
		name, keysFile, want string
	}{
		{"relative to the file", "keys/identity.keys", keys},
		{"dot-relative", "./keys/identity.keys", keys},
		{"parent-relative, cleaned", "../conf/keys/./identity.keys", keys},
		{"absolute kept, cleaned", filepath.Join(dir, "keys") + "/../keys/identity.keys", keys},
	}
	t.Chdir(t.TempDir()) // anywhere but the config's directory
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "edge.yaml")
			if err := os.WriteFile(path, []byte(ups+"identity:\n  keys_file: "+tt.keysFile+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path)
			if err != nil {
				t.Fatalf("Load = %v", err)
			}
			if cfg.Identity.KeysFile != tt.want {
				t.Errorf("identity.keys_file = %q, want %q", cfg.Identity.KeysFile, tt.want)
			}
		})
	}
	// However the file's own path is spelled, its paths come out the
	// same: absolute, cleaned.
	t.Run("spellings of the file's path", func(t *testing.T) {
		path := filepath.Join(dir, "edge.yaml")
		if err := os.WriteFile(path, []byte(ups+"identity:\n  keys_file: ../conf/keys/identity.keys\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		parent := filepath.Dir(dir)
		for _, sp := range []struct{ cwd, path string }{{dir, "edge.yaml"}, {parent, "./conf/edge.yaml"}, {parent, "conf/../conf/edge.yaml"}, {"/", path}} {
			t.Chdir(sp.cwd)
			for name, load := range map[string]func(string) (Config, error){"Load": func(p string) (Config, error) { return Load(p) }, "DecodeFile": DecodeFile} {
				cfg, err := load(sp.path)
				if err != nil {
					t.Fatalf("%s(%s) in %s = %v", name, sp.path, sp.cwd, err)
				}
				if cfg.Identity.KeysFile != keys {
					t.Errorf("%s(%s) in %s: identity.keys_file = %q, want %q", name, sp.path, sp.cwd, cfg.Identity.KeysFile, keys)
				}
			}
		}
	})
	t.Run("every file field", func(t *testing.T) {
		c := Config{Upstreams: []UpstreamConfig{{Name: "a"}}}
		for _, p := range c.filePaths() {
			*p = "f"
		}
		c.resolvePaths("/etc/portico")
		for i, p := range c.filePaths() {
			if *p != "/etc/portico/f" {
				t.Errorf("file field %d = %q after resolvePaths, want /etc/portico/f", i, *p)
			}
		}
		c.Auth.Tokens = []TokenConfig{{Token: "file:t"}, {Token: "file:/abs/t"}, {Token: "plain"}}
		c.Auth.APIKeys = []APIKeyConfig{{Key: "file:k"}}
		c.Auth.SignedApps.Apps = []AppConfig{{Secret: "file:s"}}
		c.resolvePaths("/etc/portico")
		got := []string{c.Auth.Tokens[0].Token, c.Auth.Tokens[1].Token, c.Auth.Tokens[2].Token, c.Auth.APIKeys[0].Key, c.Auth.SignedApps.Apps[0].Secret}
		want := []string{"file:/etc/portico/t", "file:/abs/t", "plain", "file:/etc/portico/k", "file:/etc/portico/s"}
		if !slices.Equal(got, want) {
			t.Errorf("secret refs after resolvePaths = %q, want %q", got, want)
		}
		if n := len(c.filePaths()); n != 9 {
			t.Errorf("%d file fields, want 9 (identity, jwks, edge TLS x3, upstream TLS x3, upstream descriptors): a new one must join filePaths", n)
		}
	})
}
