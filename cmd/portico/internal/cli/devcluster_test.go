package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDevFlagCombinations: bad combinations are usage errors (exit 2)
// naming the flag, before anything starts.
func TestDevFlagCombinations(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"replicas without postgres", []string{"--replicas", "2"}, "--replicas above 1 needs --postgres"},
		{"zero replicas", []string{"--replicas", "0"}, "--replicas 0"},
		{"too many replicas", []string{"--replicas", "10", "--postgres", "postgres://h/db"}, "--replicas 10"},
		{"postgres not a URL", []string{"--postgres", "var/x.db"}, "want a postgres:// URL"},
		{"password redacted", []string{"--postgres", "mysql://u:secret@h/db"}, "u:xxxxx@h"},
		{"ports past 65535", []string{"--replicas", "3", "--postgres", "postgres://h/db", "--base-port", "65510"}, "at most 65535"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := Main(append([]string{"dev", "--data", t.TempDir()}, tt.args...), &out, &errb); code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", code, exitUsage, errb.String())
			}
			if !strings.Contains(errb.String(), tt.want) || strings.Contains(errb.String(), "secret") {
				t.Errorf("stderr = %q, want it to mention %q and no password", errb.String(), tt.want)
			}
		})
	}
}

// TestClusterLayout: replica k on base+10k..+3, order replicas reach every
// inventory and payment replica, every edge lists every replica and shares
// Redis, and a single set keeps dev's plain names.
func TestClusterLayout(t *testing.T) {
	c := cluster{base: 40000, replicas: 3, postgres: "postgres://h/db", redis: "redis://r:6379/0"}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	kids := c.children("var", "info", []string{"e0.yaml", "e1.yaml", "e2.yaml"})
	var names []string
	for _, k := range kids {
		names = append(names, k.Name)
	}
	want := []string{"inventory-0", "payment-0", "inventory-1", "payment-1", "inventory-2", "payment-2",
		"order-0", "order-1", "order-2", "gateway-0", "gateway-1", "gateway-2"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
	order1 := strings.Join(kids[7].Args, " ")
	for _, s := range []string{"--listen 127.0.0.1:40013", "--db postgres://h/db",
		"--inventory 127.0.0.1:40001,127.0.0.1:40011,127.0.0.1:40021", "--payment 127.0.0.1:40002,127.0.0.1:40012,127.0.0.1:40022"} {
		if !strings.Contains(order1, s) {
			t.Errorf("order-1 args %q, want %q", order1, s)
		}
	}
	if inv2 := strings.Join(kids[4].Args, " "); !strings.Contains(inv2, "--listen 127.0.0.1:40021") {
		t.Errorf("inventory-2 args %q, want port 40021", inv2)
	}
	cfg := c.edgeConfig(2)
	if cfg.Listen != "127.0.0.1:40020" || cfg.Redis.URL != c.redis {
		t.Errorf("edge 2 listens on %s with redis %q", cfg.Listen, cfg.Redis.URL)
	}
	wantUp := map[string][]string{
		"inventory": {"127.0.0.1:40001", "127.0.0.1:40011", "127.0.0.1:40021"},
		"payment":   {"127.0.0.1:40002", "127.0.0.1:40012", "127.0.0.1:40022"},
		"order":     {"127.0.0.1:40003", "127.0.0.1:40013", "127.0.0.1:40023"},
	}
	for _, u := range cfg.Upstreams {
		if diff := cmp.Diff(wantUp[u.Name], u.Addresses); diff != "" {
			t.Errorf("edge 2 upstream %s addresses (-want +got):\n%s", u.Name, diff)
		}
	}
	single := cluster{base: 40000, replicas: 1}
	if got := single.children("var", "info", []string{"e.yaml"}); got[0].Name != "inventory" || got[3].Name != "gateway" ||
		!slices.Contains(got[0].Args, "var/inventory.db") {
		t.Errorf("single set = %+v, want plain names and SQLite files", got)
	}
}
