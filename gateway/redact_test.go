package gateway

import (
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/config"
)

// TestRedactURLQueryEverywhere: a secret in a URL's query string shows
// nowhere the edge shows config: /admin/config, the reload's answer,
// /admin/audit and the "config audit" log line.
func TestRedactURLQueryEverywhere(t *testing.T) {
	h, admin := consoleHarness(t)
	next := h.cfg
	next.Auth.JWT = config.JWTConfig{Issuer: "https://issuer.example", Audience: []string{"portico"}, Algorithms: []string{"RS256"},
		JWKSURL: "https://u:p@issuer.example/jwks.json?key=QSECRET1&tenant=QSECRET2"}
	res, err := h.srv.Reload(t.Context(), next, SourceAdmin)
	if err != nil {
		t.Fatalf("Reload() = %v", err)
	}
	want := "https://u:REDACTED@issuer.example/jwks.json?key=REDACTED&tenant=REDACTED"
	_, cfgBody := consoleGet(t, admin, "/admin/config", adminToken)
	_, auditBody := consoleGet(t, admin, "/admin/audit", adminToken)
	shown := map[string]string{
		"reload answer": strings.Join(res.Diff, "\n"),
		"/admin/config": cfgBody,
		"/admin/audit":  auditBody,
		"config audit":  h.logs.String(),
	}
	for where, s := range shown {
		s = strings.ReplaceAll(s, `\u0026`, "&") // JSON's escape of &
		if strings.Contains(s, "QSECRET") {
			t.Errorf("%s shows the query secret:\n%s", where, s)
		}
		if where != "config audit" && !strings.Contains(s, want) {
			t.Errorf("%s does not show %s:\n%s", where, want, s)
		}
	}
	if !strings.Contains(h.logs.String(), "config audit") {
		t.Errorf("no config audit line:\n%s", h.logs.String())
	}
}
