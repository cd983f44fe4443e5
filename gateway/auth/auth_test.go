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
		{"admin", []string{"Bearer admin-secret"}, Principal{"root", "admin"}, nil},
		{"customer", []string{"Bearer alice-secret"}, Principal{"alice", "customer"}, nil},
		{"scheme case", []string{"bEaReR alice-secret"}, Principal{"alice", "customer"}, nil},
		{"several spaces", []string{"Bearer   alice-secret"}, Principal{"alice", "customer"}, nil},
		{"surrounding whitespace", []string{" \tBearer alice-secret \t"}, Principal{"alice", "customer"}, nil},
		{"tab separator", []string{"Bearer\talice-secret"}, Principal{}, ErrNoCredentials},
		{"whitespace inside token", []string{"Bearer alice-secret x"}, Principal{}, ErrNoCredentials},
		{"no header", nil, Principal{}, ErrNoCredentials},
		{"two headers", []string{"Bearer admin-secret", "Bearer alice-secret"}, Principal{}, ErrNoCredentials},
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
			if got != tt.want || !errors.Is(err, tt.wantErr) {
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
		{"bad role", []Token{{"t", "a", "root"}}},
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

func TestAllowed(t *testing.T) {
	admin, reader, customer, other := Principal{"r", "admin"}, Principal{"c", "reader"}, Principal{"alice", "customer"}, Principal{"x", "guest"}
	tests := []struct {
		p            Principal
		method, path string
		want         bool
	}{
		{admin, "DELETE", "/api/anything", true},
		{admin, "POST", "/api", true},
		{reader, "GET", "/api/payments/p", true},
		{reader, "HEAD", "/api/orders", true},
		{reader, "POST", "/api/orders", false},
		{reader, "PATCH", "/api/inventory/a", false},
		{customer, "GET", "/api/inventory", true},
		{customer, "GET", "/api/inventory/a", true},
		{customer, "POST", "/api/inventory", false},
		{customer, "PATCH", "/api/inventory/a", false},
		{customer, "GET", "/api/inventoryx", false},
		{customer, "POST", "/api/orders", true},
		{customer, "POST", "/api/orders/o:cancel", true},
		{customer, "DELETE", "/api/orders/o", false},
		{customer, "GET", "/api/reservations/r", false},
		{customer, "GET", "/api/payments", false},
		{other, "GET", "/api/inventory", false},
		{Principal{}, "GET", "/api/inventory", false},
	}
	for _, tt := range tests {
		if got := Allowed(tt.p, tt.method, tt.path); got != tt.want {
			t.Errorf("Allowed(%s, %s %s) = %v, want %v", tt.p.Role, tt.method, tt.path, got, tt.want)
		}
	}
}
