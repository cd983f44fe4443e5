package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/config"
)

// TestSummaryNamesEveryCredential: check-config's summary names every
// kind of credential the file configures; only a file with none says
// every /api request is 401 (it used to say so whenever there were no
// legacy tokens, though API keys, JWTs and signed apps worked).
func TestSummaryNamesEveryCredential(t *testing.T) {
	const ups = `upstreams:
  - {name: inventory, addresses: [127.0.0.1:1]}
  - {name: payment, addresses: [127.0.0.1:2]}
  - {name: order, addresses: [127.0.0.1:3]}
`
	const creds = `auth:
  allow_plaintext_secrets: true
  api_keys:
    - {key: "sha256:4a1f2a4c1d9e0f3b0d1b48a3bb2e0e6d1f5b6b0e8a3b3a1e2d6c5f4e3d2c1b0a", subject: acme, roles: [reader]}
    - {key: "plain-key-000000001", subject: ops, roles: [admin]}
  jwt: {issuer: "https://idp.example", audience: [portico], algorithms: [RS256], jwks_url: "https://idp.example/jwks.json"}
  signed_apps:
    apps: [{id: acme-app, secret: "app-secret-0000000001", subject: acme, roles: [customer]}]
`
	for _, tt := range []struct {
		name, file string
		want       []string
		not401     bool
	}{
		{"keys, JWT and apps", ups + creds, []string{"2 API keys", "1 signed app secrets", "JWTs from https://idp.example", "admin 1", "customer 1", "reader 1"}, true},
		{"JWT alone", ups + "auth:\n  jwt: {issuer: \"https://idp.example\", audience: [portico], algorithms: [RS256], jwks_url: \"https://idp.example/jwks.json\"}\n",
			[]string{"JWTs from https://idp.example"}, true},
		{"nothing", ups, []string{"no credentials", "every /api request is 401"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "portico.yaml")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path, CheckRoutes)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := WriteSummary(&b, cfg); err != nil {
				t.Fatal(err)
			}
			var line string
			for l := range strings.SplitSeq(b.String(), "\n") {
				if strings.HasPrefix(l, "auth ") {
					line = l
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("auth line %q lacks %q", line, w)
				}
			}
			if tt.not401 && strings.Contains(line, "401") {
				t.Errorf("auth line %q says requests are 401, though credentials are configured", line)
			}
		})
	}
}

// TestSummaryUpstreamTLS: check-config's summary says per upstream
// whether it is dialled over TLS; a lone server_name turns it on.
func TestSummaryUpstreamTLS(t *testing.T) {
	cfg := config.Dev(0)
	cfg.Upstreams[2].TLS.ServerName = "order.internal"
	var b strings.Builder
	if err := WriteSummary(&b, cfg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tls on (system CAs, server_name order.internal)", "tls off"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
