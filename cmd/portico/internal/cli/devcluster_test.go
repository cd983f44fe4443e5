package cli

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portico-gateway/portico/internal/cpushare"
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
	for _, s := range []string{"--listen 127.0.0.1:40013",
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

// TestDevChildArgsKeepDBSecret: on PostgreSQL no child's command line (ps
// shows it to every user) holds the URL or its password; the children get
// it in $PORTICO_DB, and a service with no --db reads it from there.
func TestDevChildArgsKeepDBSecret(t *testing.T) {
	const url = "postgres://portico:s3cret-pw@127.0.0.1:5432/portico?sslmode=disable"
	for _, replicas := range []int{1, 2} {
		c := cluster{base: 40000, replicas: replicas, postgres: url}
		if err := c.validate(); err != nil {
			t.Fatal(err)
		}
		for _, k := range c.children("var", "info", []string{"e0.yaml", "e1.yaml"}) {
			if args := strings.Join(k.Args, " "); strings.Contains(args, "s3cret-pw") || strings.Contains(args, "postgres://") {
				t.Errorf("replicas %d: %s args %q hold the database URL", replicas, k.Name, args)
			}
		}
		if env := c.env([]string{"HOME=/root"}, 4); !slices.Contains(env, envDB+"="+url) {
			t.Errorf("replicas %d: env %q lacks %s", replicas, env, envDB)
		}
	}
	if env := (cluster{replicas: 1}).env([]string{"HOME=/root"}, 4); len(env) != 1 {
		t.Errorf("SQLite env = %q, want no %s", env, envDB)
	}
	t.Setenv(envDB, url)
	s, err := parseService(context.Background(), env{stdout: io.Discard, stderr: io.Discard}, "inventory", ":0", []string{"--log-level=error"}, nil)
	if err == nil {
		defer s.shutdown()
	}
	if s.db != url {
		t.Errorf("parseService without --db: db %q (err %v), want $%s", redactURL(s.db), err, envDB)
	}
	s2, err := parseService(context.Background(), env{stdout: io.Discard, stderr: io.Discard}, "inventory", ":0", []string{"--log-level=error", "--db", "x.db"}, nil)
	if err == nil {
		defer s2.shutdown()
	}
	if s2.db != "x.db" {
		t.Errorf("parseService --db x.db: db %q, want the flag over $%s", s2.db, envDB)
	}
}

// TestReadyURLsIncludeEdgeHealth: dev announces itself ready only when
// every edge reaches every service (/health), not merely when every
// process listens: an edge that started before a service listened is in
// its reconnect backoff, and the suggested request would get a 502.
func TestReadyURLsIncludeEdgeHealth(t *testing.T) {
	got := cluster{base: 40000, replicas: 2}.readyURLs()
	for _, want := range []string{"http://127.0.0.1:40000/health", "http://127.0.0.1:40010/health",
		"http://127.0.0.1:40000/healthz/ready", "http://127.0.0.1:40017/healthz/ready"} {
		if !slices.Contains(got, want) {
			t.Errorf("readyURLs() = %v, want it to hold %s", got, want)
		}
	}
}

// TestClusterShareCores: a cluster's children get their share of the
// cores (cpushare) unless the person set GOMAXPROCS; a single set keeps
// the runtime's default.
func TestClusterShareCores(t *testing.T) {
	share, _ := cpushare.Var(nil, 8)
	for _, c := range []struct {
		name     string
		replicas int
		environ  []string
		want     string // the GOMAXPROCS entry expected, "" for none added
	}{
		{"single set", 1, []string{"HOME=/root"}, ""},
		{"two sets", 2, []string{"HOME=/root"}, share},
		{"two sets, person's choice", 2, []string{"GOMAXPROCS=2"}, "GOMAXPROCS=2"},
	} {
		env := cluster{base: 40000, replicas: c.replicas, postgres: "postgres://127.0.0.1/x"}.env(c.environ, 8)
		var got []string
		for _, kv := range env {
			if strings.HasPrefix(kv, cpushare.Key+"=") {
				got = append(got, kv)
			}
		}
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: env has %q, want no GOMAXPROCS", c.name, got)
		case c.want != "" && (len(got) != 1 || got[0] != c.want):
			t.Errorf("%s: env has %q, want exactly %q", c.name, got, c.want)
		}
	}
}
