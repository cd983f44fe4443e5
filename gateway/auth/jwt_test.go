package auth_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/auth/authtest"
)

// clock is a settable clock safe for concurrent use.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newVerifier(t testing.TB, keys *auth.JWKS, now func() time.Time) *auth.JWTVerifier {
	v, err := auth.NewJWTVerifier(auth.JWTConfig{Issuer: authtest.Iss, Audience: []string{authtest.Aud},
		Algorithms: []string{"RS256", "ES256"}, Keys: keys, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestJWKSRefresh: the JWK Set is fetched on first use; an unknown kid
// refetches it at most once per MinRefresh; while the URL is down the
// cached keys keep working and a new kid fails closed; once it is back
// (and MinRefresh has passed) the new kid works.
func TestJWKSRefresh(t *testing.T) {
	iss := authtest.NewIssuer()
	url := iss.Serve(t)
	clk := &clock{now: time.Now()}
	keys := auth.NewJWKSURL(url, auth.JWKSOptions{MinRefresh: time.Minute, RefreshInterval: time.Hour, Now: clk.Now})
	v := newVerifier(t, keys, clk.Now)
	ctx := context.Background()
	verify := func(kid string) error {
		_, err := v.Verify(ctx, iss.Mint(kid, authtest.Claims(clk.Now(), "u", "reader")))
		return err
	}
	if err := verify(authtest.KidRSA); err != nil || iss.Hits() != 1 {
		t.Fatalf("first verify = %v after %d fetches; want nil after 1", err, iss.Hits())
	}
	for range 5 {
		if err := verify("unknown-kid"); !errors.Is(err, auth.ErrInvalidCredentials) {
			t.Fatalf("unknown kid = %v, want ErrInvalidCredentials", err)
		}
	}
	if iss.Hits() != 1 {
		t.Errorf("5 unknown kids within MinRefresh fetched %d times in all, want 1 (the first)", iss.Hits())
	}
	iss.SetDown(true)
	iss.Rotate()
	clk.Add(2 * time.Minute)
	if err := verify(authtest.KidNew); !errors.Is(err, auth.ErrInvalidCredentials) {
		t.Errorf("new kid while the JWKS is down = %v, want ErrInvalidCredentials", err)
	}
	if iss.Hits() != 2 {
		t.Errorf("fetches = %d, want 2 (one refresh for the new kid)", iss.Hits())
	}
	if err := verify(authtest.KidRSA); err != nil {
		t.Errorf("cached kid while the JWKS is down = %v, want nil", err)
	}
	clk.Add(2 * time.Hour) // stale: refetch fails, the cache still serves
	if err := verify(authtest.KidEC); err != nil {
		t.Errorf("cached kid past the refresh interval, JWKS down = %v, want nil", err)
	}
	iss.SetDown(false)
	clk.Add(2 * time.Minute)
	if err := verify(authtest.KidNew); err != nil {
		t.Errorf("new kid once the JWKS is back = %v, want nil", err)
	}
}

// TestJWKSFile: keys from a file; private and symmetric keys are left
// out.
func TestJWKSFile(t *testing.T) {
	iss := authtest.NewIssuer()
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, iss.JWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := auth.NewJWKSFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := newVerifier(t, keys, nil)
	p, err := v.Verify(context.Background(), iss.Mint(authtest.KidEC, authtest.Claims(time.Now(), "u", "reader", "admin")))
	if err != nil || p.Subject != "jwt:u" || p.Role != "reader" || !p.HasRole("admin") || p.Via != auth.ViaJWT {
		t.Fatalf("Verify = %+v, %v", p, err)
	}
	if _, err := auth.NewJWKSFile(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("NewJWKSFile(missing) = nil error")
	}
}

func TestNewJWTVerifierRejects(t *testing.T) {
	keys := auth.NewJWKSURL("http://127.0.0.1:1/", auth.JWKSOptions{})
	for _, tt := range []struct {
		name string
		cfg  auth.JWTConfig
	}{
		{"HS256", auth.JWTConfig{Issuer: "i", Audience: []string{"a"}, Algorithms: []string{"HS256"}, Keys: keys}},
		{"none", auth.JWTConfig{Issuer: "i", Audience: []string{"a"}, Algorithms: []string{"none"}, Keys: keys}},
		{"no issuer", auth.JWTConfig{Audience: []string{"a"}, Algorithms: []string{"RS256"}, Keys: keys}},
		{"no audience", auth.JWTConfig{Issuer: "i", Algorithms: []string{"RS256"}, Keys: keys}},
		{"no keys", auth.JWTConfig{Issuer: "i", Audience: []string{"a"}, Algorithms: []string{"RS256"}}},
	} {
		if _, err := auth.NewJWTVerifier(tt.cfg); err == nil {
			t.Errorf("%s: NewJWTVerifier = nil error", tt.name)
		}
	}
}

// TestJWTClaimsMapping: dotted claim names and space-separated roles.
func TestJWTClaimsMapping(t *testing.T) {
	iss := authtest.NewIssuer()
	keys := auth.NewJWKSURL(iss.Serve(t), auth.JWKSOptions{})
	v, err := auth.NewJWTVerifier(auth.JWTConfig{Issuer: authtest.Iss, Audience: []string{"x", authtest.Aud},
		Algorithms: []string{"RS256"}, Keys: keys,
		Claims: auth.Claims{Subject: "email", Roles: "realm.roles", Plan: "tier"}})
	if err != nil {
		t.Fatal(err)
	}
	c := authtest.Claims(time.Now(), "ignored")
	c["email"], c["realm"], c["tier"] = "a@example.com", map[string]any{"roles": "customer reader"}, "gold"
	p, err := v.Verify(context.Background(), iss.Mint(authtest.KidRSA, c))
	want := auth.NewPrincipal("jwt:a@example.com", []string{"customer", "reader"}, "", "gold", auth.ViaJWT)
	if err != nil || !p.Equal(want) {
		t.Fatalf("Verify = %+v, %v; want %+v", p, err, want)
	}
	c["realm"] = map[string]any{"roles": []any{"Bad Role", "Admin", "reader"}}
	if p, err := v.Verify(context.Background(), iss.Mint(authtest.KidRSA, c)); err != nil || !slices.Equal(p.Roles, []string{"reader"}) {
		t.Errorf("names that cannot be roles = %+v, %v; want them left out, roles [reader]", p, err)
	}
	c["realm"] = map[string]any{"roles": []any{"reader", 7}}
	if _, err := v.Verify(context.Background(), iss.Mint(authtest.KidRSA, c)); !errors.Is(err, auth.ErrInvalidCredentials) {
		t.Errorf("a role that is no string = %v, want ErrInvalidCredentials", err)
	}
}

// TestJWTFailureDetails: each way a token fails names its cause; a claim
// problem is never reported as a bad signature (the signature verified).
func TestJWTFailureDetails(t *testing.T) {
	iss := authtest.NewIssuer()
	now := time.Now()
	v := newVerifier(t, auth.NewJWKSURL(iss.Serve(t), auth.JWKSOptions{}), func() time.Time { return now })
	mint := func(mod func(jwt.MapClaims)) string {
		c := authtest.Claims(now, "u", "reader")
		mod(c)
		return iss.Mint(authtest.KidRSA, c)
	}
	good := mint(func(jwt.MapClaims) {})
	for _, tt := range []struct {
		name, tok string
		want      string
	}{
		{"iat in the future", mint(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() }), "issued in the future"},
		{"exp of the wrong type", mint(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }), "wrong type"},
		{"iss of the wrong type", mint(func(c jwt.MapClaims) { c["iss"] = []string{authtest.Iss} }), "wrong type"},
		{"not a JWT", "eyJ.e30.x", "malformed"},
		{"signature changed", good[:len(good)-4] + "AAAA", "signature does not verify"},
	} {
		_, err := v.Verify(context.Background(), tt.tok)
		if !errors.Is(err, auth.ErrInvalidCredentials) || !strings.Contains(auth.Detail(err), tt.want) {
			t.Errorf("%s: Verify = %v (%q), want ErrInvalidCredentials saying %q", tt.name, err, auth.Detail(err), tt.want)
		}
	}
}
