package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/auth/authtest"
	"github.com/portico-gateway/portico/gateway/config"
)

// TestJWTSubjectsNotTrimmed: a JWT's subject is taken exactly as sent
// (RFC 7519 section 2: StringOrURI values are compared with no
// transformation), so " alice" is refused rather than read as alice.
func TestJWTSubjectsNotTrimmed(t *testing.T) {
	iss := authtest.NewIssuer()
	h := credentialHarness(t, iss)
	var got []string
	h.inv.listItems = listItemsRecording(&got)
	tests := []struct {
		name, sub string
		status    int
		upstream  string // the subject the upstream saw
	}{
		{"exact", "alice", 200, "jwt:alice"},
		{"leading space", " alice", 401, ""},
		{"trailing space", "alice ", 401, ""},
		{"both", "  alice  ", 401, ""},
		{"tab", "alice\t", 401, ""},
		{"newline", "\nalice", 401, ""},
		{"NUL", "al\x00ice", 401, ""},
		{"inner space kept", "alice smith", 200, "jwt:alice smith"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			tok := iss.Mint(authtest.KidRSA, authtest.Claims(time.Now(), tt.sub, "reader"))
			r := h.do("GET", "/api/inventory", tok, "")
			code := ""
			if r.status >= 400 {
				code, _ = r.json(t)["code"].(string)
			}
			if r.status != tt.status || tt.status == 401 && code != "UNAUTHENTICATED" {
				t.Fatalf("GET with sub %q = %d %s; want %d", tt.sub, r.status, r.body, tt.status)
			}
			if sub := strings.Join(got[:min(len(got), 1)], ""); sub != tt.upstream {
				t.Errorf("sub %q: upstream saw subject %q, want %q", tt.sub, sub, tt.upstream)
			}
		})
	}
}

// TestJWTSubjectsNamespaced: a JWT's subject lives apart from the
// subjects the config names (API keys, signed apps), so a token for
// "alice" is not the API-key user alice; auth.jwt.shared_subjects opts in
// to one namespace.
func TestJWTSubjectsNamespaced(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shared bool
		jwt    string // the subject upstreams see for a JWT with sub alice
	}{
		{"apart by default", false, "jwt:alice"},
		{"shared when configured", true, "alice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			iss := authtest.NewIssuer()
			url := iss.Serve(t)
			h := newHarness(t, setup{cfg: func(c *config.Config) {
				c.Auth.JWT = config.JWTConfig{Issuer: authtest.Iss, Audience: []string{authtest.Aud}, Algorithms: []string{"RS256"},
					JWKSURL: url, SharedSubjects: tt.shared}
			}})
			okStubs(h)
			var got []string
			h.inv.listItems = listItemsRecording(&got)
			c := authtest.Claims(time.Now(), "alice", "customer")
			c["tenant"] = "other"
			if r := h.do("GET", "/api/inventory", iss.Mint(authtest.KidRSA, c), ""); r.status != 200 || len(got) == 0 || got[0] != tt.jwt {
				t.Fatalf("JWT alice: GET = %d %s; upstream saw %v, want subject %q", r.status, r.body, got, tt.jwt)
			}
			got = nil
			if r := h.do("GET", "/api/inventory", aliceToken, ""); r.status != 200 || len(got) == 0 || got[0] != "alice" {
				t.Fatalf("API key alice: GET = %d %s; upstream saw %v, want subject alice", r.status, r.body, got)
			}
		})
	}
}

// TestJWTRoleNotARoleName: a roles claim naming something that cannot be
// a role ("Admin": role names are lower case) is a verified token that
// the policy grants nothing by that name: 403, not 401. Role names are
// compared as sent, so "Admin" is never admin.
func TestJWTRoleNotARoleName(t *testing.T) {
	iss := authtest.NewIssuer()
	h := credentialHarness(t, iss)
	var got []string
	h.inv.listItems = listItemsRecording(&got)
	for _, tt := range []struct {
		name   string
		roles  []string
		status int
		role   string // the role the upstream saw
	}{
		{"capital letter", []string{"Admin"}, 403, ""},
		{"space inside", []string{"Bad Role"}, 403, ""},
		{"beside a role", []string{"Admin", "reader"}, 200, "reader"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			r := h.do("GET", "/api/inventory", iss.Mint(authtest.KidRSA, authtest.Claims(time.Now(), "u", tt.roles...)), "")
			code := ""
			if r.status >= 400 {
				code, _ = r.json(t)["code"].(string)
			}
			if r.status != tt.status || tt.status == 403 && code != "FORBIDDEN" {
				t.Fatalf("GET with roles %q = %d %s; want %d", tt.roles, r.status, r.body, tt.status)
			}
			if tt.role != "" && (len(got) < 2 || got[1] != tt.role) {
				t.Errorf("roles %q: upstream saw %v, want role %s", tt.roles, got, tt.role)
			}
		})
	}
}
