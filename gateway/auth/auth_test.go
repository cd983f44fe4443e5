package auth

import (
	"errors"
	"net/http"
	"testing"
)

func TestTokens(t *testing.T) {
	toks, err := NewTokens([]Token{
		{Token: "admin-secret", Subject: "root", Role: "admin"},
		{Token: "alice-secret", Subject: "alice", Role: "customer"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		headers []string
		want    Principal
		wantErr error
	}{
		{"admin", []string{"Bearer admin-secret"}, pr("root", "admin"), nil},
		{"customer", []string{"Bearer alice-secret"}, pr("alice", "customer"), nil},
		{"scheme case", []string{"bEaReR alice-secret"}, pr("alice", "customer"), nil},
		{"several spaces", []string{"Bearer   alice-secret"}, pr("alice", "customer"), nil},
		{"surrounding whitespace", []string{" \tBearer alice-secret \t"}, pr("alice", "customer"), nil},
		{"tab separator", []string{"Bearer\talice-secret"}, Principal{}, ErrNoCredentials},
		{"whitespace inside token", []string{"Bearer alice-secret x"}, Principal{}, ErrNoCredentials},
		{"no header", nil, Principal{}, ErrNoCredentials},
		{"basic", []string{"Basic YWxpY2U6cHc="}, Principal{}, ErrNoCredentials},
		{"no token", []string{"Bearer"}, Principal{}, ErrNoCredentials},
		{"unknown", []string{"Bearer alice-secreT"}, Principal{}, ErrInvalidCredentials},
		{"prefix of a token", []string{"Bearer alice"}, Principal{}, ErrInvalidCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodGet, "/", nil)
			for _, h := range tt.headers {
				r.Header.Add("Authorization", h)
			}
			got, err := toks.Authenticate(r)
			if !got.Equal(tt.want) || !errors.Is(err, tt.wantErr) {
				t.Errorf("Authenticate(%v) = %v, %v; want %v, %v", tt.headers, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestNewTokensRejects(t *testing.T) {
	tests := []struct {
		name string
		ts   []Token
	}{
		{"empty token", []Token{{"", "a", "admin"}}},
		{"whitespace", []Token{{"a b", "a", "admin"}}},
		{"duplicate", []Token{{"t", "a", "admin"}, {"t", "b", "reader"}}},
		{"bad role", []Token{{"t", "a", "Root!"}}},
		{"bad subject", []Token{{"t", "a\n", "admin"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewTokens(tt.ts); err == nil {
				t.Errorf("NewTokens(%v) = nil error", tt.ts)
			}
		})
	}
}

// pr is an API key's principal with one role.
func pr(subject, role string) Principal {
	return NewPrincipal(subject, []string{role}, "", "", ViaAPIKey)
}
