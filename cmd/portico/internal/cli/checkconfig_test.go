package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/gateway/config"
)

// TestCheckConfigSummaryAndDiff: check-config prints the summary, and
// --diff-against a file or a live admin URL prints exactly what would
// change, secrets redacted.
func TestCheckConfigSummaryAndDiff(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, c config.Config) string {
		b, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := config.Dev(43100)
	next := config.Dev(43100)
	next.Upstreams[2].Addresses = []string{"127.0.0.1:43103", "127.0.0.1:43113"}
	next.Auth.Tokens[3].Token = "rotated-bob-token"
	next.Routes.MaxBodyBytes = 4096
	oldPath, nextPath := write("old.yaml", old), write("next.yaml", next)

	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/admin/config" || r.Header.Get("Authorization") != "Bearer demo-admin-token" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"version": map[string]string{"id": "x"}, "config": config.Redacted(old)})
	}))
	defer admin.Close()
	t.Setenv(adminTokenEnv, "demo-admin-token")

	diff := "  ~ routes.max_body_bytes: 1048576 -> 4096\n" +
		"  ~ upstreams[order].addresses: [127.0.0.1:43103] -> [127.0.0.1:43103, 127.0.0.1:43113]\n"
	tests := []struct{ name, against, want string }{
		// A file has the tokens, so a rotated one shows, as changed only.
		{"file", oldPath, "(3):\n  ~ auth.tokens[bob].token: [REDACTED] -> [REDACTED]\n" + diff},
		// The admin API redacts them: they are not compared.
		{"admin url", admin.URL + "/admin/config", "(2):\n" + diff},
	}
	for _, tt := range tests {
		against := tt.against
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := Main([]string{"check-config", "--diff-against", against, nextPath}, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			for _, want := range []string{"version ", "upstreams (3):", "routes (18):", "POST /api/orders", "admin,customer",
				"tls off", "stream 1h0m0s, idle 5m0s", "portico.order.v1.OrderService/CreateOrder",
				"changes against " + against + " " + tt.want} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			if strings.Contains(out.String(), "rotated-bob-token") {
				t.Error("the output shows a token")
			}
		})
	}
}

// TestCheckConfigSubset: a config with only the inventory upstream is
// valid; check-config lists its routes only and warns, exit 0, that the
// other compiled-in services are not served.
func TestCheckConfigSubset(t *testing.T) {
	cfg := config.Dev(43100)
	cfg.Upstreams = cfg.Upstreams[:1]
	cfg.Ops.ReadyRequires = nil
	cfg.Limits.Groups = nil // its group holds POST /api/orders, not served: New refuses it
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "inventory-only.yaml")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"check-config", p}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"upstreams (1):", "routes (8):", "GET /api/inventory/{sku}", p + ": ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "/api/orders") {
		t.Errorf("output lists an order route:\n%s", out.String())
	}
	for _, want := range []string{
		`warning: upstreams: portico.payment.v1.PaymentService is not served (no upstream named "payment"): its routes answer 404`,
		`warning: upstreams: portico.order.v1.OrderService is not served (no upstream named "order"): its routes answer 404`,
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
}
