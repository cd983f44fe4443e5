package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCommands(t *testing.T) {
	dir := t.TempDir()
	// A service that wrongly starts writes its files here, not in the
	// source tree (an unsupported --db URL used to become a directory).
	t.Chdir(dir)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const ups = `upstreams:
  - {name: inventory, addresses: [127.0.0.1:1]}
  - {name: payment, addresses: [127.0.0.1:2]}
  - {name: order, addresses: [127.0.0.1:3]%s}
`
	good := write("good.yaml", strings.Replace(ups, "%s", "", 1))
	n := 0
	res := func(block string) string {
		n++
		return write(fmt.Sprintf("res-%d.yaml", n), strings.Replace(ups, "%s", ", resilience: "+block, 1))
	}
	order := func(flag, addr string) []string {
		return []string{"order", "--listen", "127.0.0.1:bad", "--db", filepath.Join(dir, "order.db"), flag, addr}
	}
	// svc runs a service whose --listen fails, so that one that wrongly
	// starts exits rather than serving.
	svc := func(name, db string) []string {
		return []string{name, "--listen", "127.0.0.1:bad", "--db", db}
	}
	const dbWant = "want an SQLite file path or a postgres://user@host:port/db (or postgresql://) URL"
	setAddr := func(name, addr string) string {
		return write(name, strings.Replace(strings.Replace(ups, "%s", "", 1), "127.0.0.1:1", addr, 1))
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string // substring of stderr
	}{
		{"no command", nil, 2, "usage"},
		{"check-config without a file", []string{"check-config"}, 2, "portico help check-config"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"check-config ok", []string{"check-config", good}, 0, ""},
		{"check-config missing file", []string{"check-config", filepath.Join(dir, "nope.yaml")}, 1, "nope.yaml"},
		{"check-config unknown key", []string{"check-config", write("typo.yaml", "listn: x\n")}, 1, "listn"},
		{"resilience error names path and line", []string{"check-config", res("{breakr: {}}")}, 1, "upstreams[2].resilience.breakr: unknown field (line 4)"},
		{"resilience value error names the field", []string{"check-config", res("{retry: {max_attempts: -1}}")}, 1, "upstreams[2].resilience.retry.max_attempts"},
		{"zero means the default", []string{"check-config", res("{retry: {max_attempts: 0}}")}, 0, ""},
		{"uncovered route warns, exit 0", []string{"check-config", write("policy.yaml", strings.Replace(ups, "%s", "", 1)+
			"auth:\n  policy:\n    - {roles: [admin], allow: [\"portico.order.v1.OrderService/*\"]}\n")}, 0,
			"warning: auth.policy: no rule covers GET /api/inventory/{sku} (/portico.inventory.v1.InventoryService/GetItem)"},
		{"plaintext token warns, exit 0", []string{"check-config", write("plain.yaml", strings.Replace(ups, "%s", "", 1)+
			"auth:\n  tokens: [{token: t0k3n, subject: s, role: admin}]\n")}, 0, "warning: auth.tokens[0]: a plaintext token"},
		{"jwks over plain http warns, exit 0", []string{"check-config", write("jwks.yaml", strings.Replace(ups, "%s", "", 1)+
			"auth:\n  jwt: {issuer: https://idp.example, audience: [portico], algorithms: [RS256], jwks_url: \"http://idp.example/jwks.json\"}\n")}, 0,
			"warning: auth.jwt.jwks_url: plain http"},
		{"unset env secret", []string{"check-config", write("env.yaml", strings.Replace(ups, "%s", "", 1)+
			"auth:\n  api_keys: [{key: \"env:PORTICO_UNSET_FOR_TEST\", subject: s, roles: [admin]}]\n")}, 1,
			`auth.api_keys[0].key: environment variable "PORTICO_UNSET_FOR_TEST" is unset or empty`},
		{"gateway needs --config", []string{"gateway"}, 2, "--config"},
		{"dev base port out of range", []string{"dev", "--base-port", "70000"}, 1, "base-port"},
		{"bad log level", []string{"inventory", "--log-level", "loud"}, 1, "log-level"},
		{"bad log format", []string{"inventory", "--log-format", "yaml"}, 2, `--log-format "yaml": want text or json`},
		{"bad faults spec", []string{"inventory", "--faults", "delay=banana"}, 1, "faults"},
		{"stray argument", []string{"payment", "extra"}, 2, "unexpected argument"},
		// --inventory and --payment that could never be dialled fail at start
		// (before the listener, which --listen makes fail should they not).
		{"order: --inventory not host:port", order("--inventory", "garbage"), 1, `--inventory: "garbage" is not host:port; want host:port`},
		{"order: --inventory empty list entry", order("--inventory", "127.0.0.1:1,,127.0.0.1:2"), 1, "--inventory: \"127.0.0.1:1,,127.0.0.1:2\": entry 2: must not be empty"},
		{"order: --payment trailing comma", order("--payment", "127.0.0.1:2,"), 1, "--payment: \"127.0.0.1:2,\": entry 2: must not be empty"},
		{"order: --inventory port out of range", order("--inventory", "127.0.0.1:99999"), 1, "port of 1-65535"},
		{"order: --inventory port 0", order("--inventory", "127.0.0.1:0"), 1, "port of 1-65535"},
		{"order: --inventory dns without a name", order("--inventory", "dns:///"), 1, `"dns:///" is not host:port`},
		{"order: --inventory dns without name", order("--inventory", "dns:///:43101"), 1, `"dns:///:43101" has no host`},
		{"order: --inventory unknown scheme", order("--inventory", "http://127.0.0.1:43101"), 1, `no resolver for scheme "http"`},
		{"order: --inventory dns in a list", order("--inventory", "dns:///inventory:43101,127.0.0.1:1"), 1, "entry 1: \"dns:///inventory:43101\" is not host:port; with several addresses each must be host:port"},
		// Upstream addresses that could never be dialled fail the check,
		// naming the entry (interceptors.CheckAddresses).
		{"check-config: scheme gRPC cannot dial", []string{"check-config", setAddr("scheme.yaml", "'foo://bar'")}, 1,
			`upstreams[0].addresses[0]: "foo://bar": gRPC has no resolver for scheme "foo"`},
		{"check-config: http URL", []string{"check-config", setAddr("http.yaml", "'http://127.0.0.1:31001'")}, 1, `no resolver for scheme "http"`},
		{"check-config: dns without a name", []string{"check-config", setAddr("dns.yaml", "'dns:///'")}, 1,
			`upstreams[0].addresses[0]: "dns:///" is not host:port`},
		{"check-config: dns port out of range", []string{"check-config", setAddr("dnsport.yaml", "'dns:///localhost:99999'")}, 1,
			`upstreams[0].addresses[0]: "dns:///localhost:99999" has port "99999"; want a port of 1-65535 or a known service name`},
		{"check-config: port not a number", []string{"check-config", setAddr("port.yaml", "'127.0.0.1:43101', 'localhost:abc'")}, 1,
			`upstreams[0].addresses[1]: "localhost:abc" has port "abc"`},
		{"check-config: IPv6 list", []string{"check-config", setAddr("ipv6.yaml", "'[::1]:43101', '127.0.0.1:43111'")}, 0, ""},
		// --db is an SQLite path or a postgres:// URL: another URL, or
		// nothing, used to become an SQLite path (./mysql:/root@...).
		{"inventory: --db mysql URL", svc("inventory", "mysql://root@127.0.0.1/x"), 1, `--db: a mysql:// URL is not supported; ` + dbWant},
		{"payment: --db URL password kept out", svc("payment", "mysql://root:hunter2@127.0.0.1/x"), 1, `--db: a mysql:// URL`},
		{"order: --db sqlite URL", svc("order", "sqlite:///var/order.db"), 1, `--db: a sqlite:// URL is not supported`},
		{"inventory: --db empty", svc("inventory", ""), 1, `--db: empty; ` + dbWant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if got := Main(tt.args, &out, &errb); got != tt.wantCode {
				t.Fatalf("Main(%q) = %d, want %d; stderr %s", tt.args, got, tt.wantCode, errb.String())
			}
			if !strings.Contains(errb.String(), tt.wantErr) {
				t.Errorf("stderr = %q, want it to mention %q", errb.String(), tt.wantErr)
			}
		})
	}
}

// TestDBErrorKeepsSecretsOut: a refused --db never repeats its value, which
// may hold a password in its user info or its query.
func TestDBErrorKeepsSecretsOut(t *testing.T) {
	for _, db := range []string{"mysql://root:hunter2@127.0.0.1/x", "mysql://db.example/x?password=hunter2", "sqlserver://db.example?user%20id=sa&password=hunter2"} {
		var out, errb bytes.Buffer
		if got := Main([]string{"inventory", "--listen", "127.0.0.1:bad", "--db", db}, &out, &errb); got != 1 {
			t.Fatalf("--db %s: exit %d, want 1; stderr %s", db, got, errb.String())
		}
		if strings.Contains(errb.String()+out.String(), "hunter2") {
			t.Errorf("--db %s: the password is in the output: %s", db, errb.String())
		}
	}
}

// TestLogFormat: --log-format text renders every record as one line for a
// person; json (the default off a terminal) keeps one JSON record a line.
func TestLogFormat(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		format []string
		want   *regexp.Regexp
	}{
		{"default", nil, regexp.MustCompile(`^\{"time":"[^"]+","level":"WARN","msg":"no identity keys`)},
		{"json", []string{"--log-format", "json"}, regexp.MustCompile(`^\{"time":"[^"]+","level":"WARN","msg":"no identity keys`)},
		{"text", []string{"--log-format", "text"}, regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} WARN  inventory no identity keys`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"inventory", "--listen", "127.0.0.1:bad", "--db", filepath.Join(dir, "inventory.db")}, tt.format...)
			if got := Main(args, &out, &errb); got != 1 { // the listener fails after the first record
				t.Fatalf("Main(%q) = %d, want 1; stderr %s", args, got, errb.String())
			}
			if !tt.want.MatchString(out.String()) {
				t.Errorf("log = %q, want it to match %s", out.String(), tt.want)
			}
		})
	}
}

func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for name, w := range map[string]io.Writer{"a pipe": w, os.DevNull: null, "a buffer": &bytes.Buffer{}} {
		if isTerminal(w) {
			t.Errorf("isTerminal(%s) = true, want false", name)
		}
	}
}
