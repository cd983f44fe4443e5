package config

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestRedactURL: a URL keeps its scheme, host, path and query keys; the
// password of its userinfo and every query value become REDACTED.
func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://u:p@host/jwks.json?api_key=SECRET", "https://u:REDACTED@host/jwks.json?api_key=REDACTED"},
		{"https://host/jwks.json?key=S1&tenant=S2", "https://host/jwks.json?key=REDACTED&tenant=REDACTED"},
		{"https://host/jwks.json?flag", "https://host/jwks.json?flag"},
		{"https://host/jwks.json", "https://host/jwks.json"},
		{"redis://:pw@127.0.0.1:6379/0", "redis://:REDACTED@127.0.0.1:6379/0"},
		{"/api/orders?x=1", "/api/orders?x=1"}, // not a URL with a host: not a URL-valued field
		{"plain text", "plain text"},
	}
	for _, tt := range tests {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPlainRemoteHTTP: a JWK Set URL warns when it is plain http to a
// host other than the loopback.
func TestPlainRemoteHTTP(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want bool
	}{
		{"http://idp.example/jwks.json", true},
		{"http://10.0.0.7:8080/jwks.json", true},
		{"http://127.0.0.1.example/jwks.json", true},
		{"https://idp.example/jwks.json", false},
		{"http://127.0.0.1:8080/jwks.json", false},
		{"http://localhost/jwks.json", false},
		{"http://[::1]:9/jwks.json", false},
		{"", false},
	} {
		if got := plainRemoteHTTP(tt.url); got != tt.want {
			t.Errorf("plainRemoteHTTP(%q) = %v, want %v", tt.url, got, tt.want)
		}
	}
}

// TestRedactedSecretsOnly: /admin/config and the audit diff hide secret
// values (a token, a key) but show where secrets are kept (a file's path,
// a variable's name) and numbers under secret-sounding names.
func TestRedactedSecretsOnly(t *testing.T) {
	a := Config{}
	a.Identity.KeysFile = "/etc/portico/identity.keys"
	a.TLS.KeyFile = "/etc/portico/tls.key"
	a.Auth.Tokens = []TokenConfig{{Token: "plain-token-value-1", Subject: "alice"}}
	a.Auth.MaxTokenBytes = 4096
	b := a
	b.Identity.KeysFile = "/etc/portico/identity2.keys"
	b.Auth.Tokens = []TokenConfig{{Token: "plain-token-value-2", Subject: "alice"}}
	b.Auth.MaxTokenBytes = 8192

	shown, err := json.Marshal(Redacted(a))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"keys_file":"/etc/portico/identity.keys"`, `"key_file":"/etc/portico/tls.key"`, `"token":"[REDACTED]"`, `"max_token_bytes":4096`} {
		if !strings.Contains(string(shown), want) {
			t.Errorf("Redacted lacks %s: %s", want, shown)
		}
	}
	if strings.Contains(string(shown), "plain-token-value") {
		t.Errorf("Redacted shows a token: %s", shown)
	}
	want := []string{
		"~ auth.max_token_bytes: 4096 -> 8192",
		"~ auth.tokens[alice].token: [REDACTED] -> [REDACTED]",
		"~ identity.keys_file: /etc/portico/identity.keys -> /etc/portico/identity2.keys",
	}
	if got := Diff(a, b); !slices.Equal(got, want) {
		t.Errorf("Diff = %q, want %q", got, want)
	}
}

// TestSecretField: which last path elements hold a secret value.
func TestSecretField(t *testing.T) {
	for path, want := range map[string]bool{
		"auth.tokens[0].token": true, "auth.api_keys[0].key": true, "auth.apps[0].secret": true,
		"redis.password": true, "identity.keys_file": false, "identity.keys_env": false,
		"tls.key_file": false, "upstreams[a].tls.key_file": false, "auth.jwt.jwks_file": false,
	} {
		if got := secretField(path); got != want {
			t.Errorf("secretField(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestDiffListKeys: list entries are keyed by name or subject when each is
// distinct, so an entry added at the top reads as one added entry rather
// than every later entry changed; without distinct keys, by position.
func TestDiffListKeys(t *testing.T) {
	tok := func(subject, role string) TokenConfig {
		return TokenConfig{Token: "t-" + subject + "-" + role, Subject: subject, Role: role}
	}
	for _, tt := range []struct {
		name string
		a, b []TokenConfig
		want []string
	}{
		{"added at the top", []TokenConfig{tok("reader", "reader")}, []TokenConfig{tok("ops", "admin"), tok("reader", "reader")},
			[]string{"+ auth.tokens[ops].role: admin", "+ auth.tokens[ops].subject: ops", "+ auth.tokens[ops].token: [REDACTED]"}},
		{"role changed", []TokenConfig{tok("reader", "reader")}, []TokenConfig{{Token: "t-reader-reader", Subject: "reader", Role: "admin"}},
			[]string{"~ auth.tokens[reader].role: reader -> admin"}},
		{"subjects repeat: by position", []TokenConfig{tok("a", "reader"), tok("a", "admin")}, []TokenConfig{tok("a", "reader"), {Token: "t-a-admin", Subject: "a", Role: "customer"}},
			[]string{"~ auth.tokens[1].role: admin -> customer"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var a, b Config
			a.Auth.Tokens, b.Auth.Tokens = tt.a, tt.b
			if got := Diff(a, b); !slices.Equal(got, tt.want) {
				t.Errorf("Diff = %q, want %q", got, tt.want)
			}
		})
	}
}
