package config

import "testing"

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
