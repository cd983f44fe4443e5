package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/auth/authtest"
	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
)

const (
	partnerKey = "partner-key-0001"
	envKey     = "env-key-0001"
	oldKey     = "old-key-0001"
	appSecret  = "demo-app-secret-0001" // config.Dev's demo-app
)

// credentialHarness is a harness whose edge accepts every kind of
// credential: a hashed API key, one from an env var, an expired one, JWTs
// from iss's JWK Set over HTTP, and config.Dev's signed app.
func credentialHarness(t *testing.T, iss *authtest.Issuer) *harness {
	t.Setenv("PORTICO_TEST_KEY", envKey)
	sum := sha256.Sum256([]byte(partnerKey))
	url := iss.Serve(t)
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Auth.APIKeys = []config.APIKeyConfig{
			{Key: "sha256:" + hex.EncodeToString(sum[:]), Subject: "partner", Roles: []string{"reader"}, Plan: "pro"},
			{Key: "env:PORTICO_TEST_KEY", Subject: "env-partner", Roles: []string{"reader"}},
			{Key: oldKey, Subject: "old", Roles: []string{"reader"}, NotAfter: "2020-01-01T00:00:00Z"},
		}
		c.Auth.JWT = config.JWTConfig{Issuer: authtest.Iss, Audience: []string{authtest.Aud}, Algorithms: []string{"RS256", "ES256"}, JWKSURL: url}
	}})
	okStubs(h)
	return h
}

// TestBadCredentials is the table: every bad credential with its
// exact status and code, beside the good ones it is a variation of.
func TestBadCredentials(t *testing.T) {
	iss := authtest.NewIssuer()
	h := credentialHarness(t, iss)
	now := time.Now()
	claims := func(mod func(jwt.MapClaims)) jwt.MapClaims {
		c := authtest.Claims(now, "jwt-user", "reader")
		if mod != nil {
			mod(c)
		}
		return c
	}
	bearer := func(tok string) []string { return []string{"Authorization: Bearer " + tok} }
	hs256 := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(nil))
	hs256.Header["kid"] = authtest.KidRSA
	pub := x509PublicPEM(t, iss)
	confused, _ := hs256.SignedString(pub)
	none := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil))
	none.Header["kid"] = authtest.KidRSA
	noneTok, _ := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	ts := now.Unix()
	signed := func(method, path, query, body string, ts int64, nonce string) []string {
		return authtest.SignedHeaders(appSecret, "demo-app", method, path, query, []byte(body), ts, nonce)
	}
	signedKey := func(body string, ts int64, nonce, key string) []string {
		return authtest.SignedHeadersWithKey(appSecret, "demo-app", "POST", "/api/orders", "", []byte(body), ts, nonce, key)
	}
	tests := []struct {
		name         string
		method, path string
		body         string
		header       []string
		status       int
		code         string
	}{
		{"api key hashed", "GET", "/api/inventory", "", bearer(partnerKey), 200, ""},
		{"api key from env", "GET", "/api/inventory", "", bearer(envKey), 200, ""},
		{"api key past not_after", "GET", "/api/inventory", "", bearer(oldKey), 401, "CREDENTIALS_EXPIRED"},
		{"jwt RS256", "GET", "/api/inventory", "", bearer(iss.Mint(authtest.KidRSA, claims(nil))), 200, ""},
		{"jwt ES256", "GET", "/api/inventory", "", bearer(iss.Mint(authtest.KidEC, claims(nil))), 200, ""},
		{"jwt expired", "GET", "/api/inventory", "", bearer(iss.Mint(authtest.KidRSA, claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() }))), 401, "CREDENTIALS_EXPIRED"},
		{"jwt not yet valid", "GET", "/api/inventory", "", bearer(iss.Mint(authtest.KidRSA, claims(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Minute).Unix() }))), 401, "UNAUTHENTICATED"},
		{"jwt nbf within leeway", "GET", "/api/inventory", "", bearer(iss.Mint(authtest.KidRSA, claims(func(c jwt.MapClaims) { c["nbf"] = now.Add(10 * time.Second).Unix() }))), 200, ""},
		{"jwt wrong audience", "GET", "/api/inventory", "", bearer(iss.Mint(authtest.KidRSA, claims(func(c jwt.MapClaims) { c["aud"] = "other" }))), 401, "UNAUTHENTICATED"},
		{"jwt wrong issuer", "GET", "/api/inventory", "", bearer(iss.Mint(authtest.KidRSA, claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.test" }))), 401, "UNAUTHENTICATED"},
		{"jwt without exp", "GET", "/api/inventory", "", bearer(iss.Mint(authtest.KidRSA, claims(func(c jwt.MapClaims) { delete(c, "exp") }))), 401, "UNAUTHENTICATED"},
		{"jwt alg none", "GET", "/api/inventory", "", bearer(noneTok), 401, "UNAUTHENTICATED"},
		{"jwt HS256 signed with the RSA public key", "GET", "/api/inventory", "", bearer(confused), 401, "UNAUTHENTICATED"},
		{"jwt with a crit header", "GET", "/api/inventory", "", bearer(iss.MintWithHeader(authtest.KidRSA, claims(nil), map[string]any{"crit": []string{"exp"}})), 401, "UNAUTHENTICATED"},
		{"jwt unknown kid", "GET", "/api/inventory", "", bearer(iss.Mint("nope-1", claims(nil))), 401, "UNAUTHENTICATED"},
		{"jwt without roles", "GET", "/api/inventory", "", bearer(iss.Mint(authtest.KidRSA, claims(func(c jwt.MapClaims) { delete(c, "roles") }))), 403, "FORBIDDEN"},
		{"oversize token", "GET", "/api/inventory", "", bearer("eyJ" + strings.Repeat("a", auth.DefaultMaxTokenBytes)), 401, "UNAUTHENTICATED"},
		{"signed", "POST", "/api/orders", orderBody, signedKey(orderBody, ts, "nonce-signed-000001", "k1"), 201, ""},
		{"signed, idempotency key changed", "POST", "/api/orders", orderBody, append(signedKey(orderBody, ts, "nonce-idemkey-00001", "k1")[:4], "Idempotency-Key: k9"), 401, "UNAUTHENTICATED"},
		{"signed, idempotency key not signed", "POST", "/api/orders", orderBody, append(signed("POST", "/api/orders", "", orderBody, ts, "nonce-idemkey-00002"), "Idempotency-Key: k9"), 401, "UNAUTHENTICATED"},
		{"signed with query", "GET", "/api/orders?pageSize=5", "", signed("GET", "/api/orders", "pageSize=5", "", ts, "nonce-query-0000001"), 200, ""},
		{"signed, query changed", "GET", "/api/orders?pageSize=6", "", signed("GET", "/api/orders", "pageSize=5", "", ts, "nonce-query-0000002"), 401, "UNAUTHENTICATED"},
		{"tampered body", "POST", "/api/orders", strings.Replace(orderBody, `"quantity":2`, `"quantity":9`, 1), signedKey(orderBody, ts, "nonce-tamper-00001", "k2"), 401, "UNAUTHENTICATED"},
		{"replayed nonce", "POST", "/api/orders", orderBody, signedKey(orderBody, ts, "nonce-signed-000001", "k1"), 401, "REQUEST_REPLAYED"},
		{"stale timestamp", "GET", "/api/inventory", "", signed("GET", "/api/inventory", "", "", ts-400, "nonce-stale-000001"), 401, "CLOCK_SKEW"},
		{"future timestamp", "GET", "/api/inventory", "", signed("GET", "/api/inventory", "", "", ts+400, "nonce-future-00001"), 401, "CLOCK_SKEW"},
		{"signature headers missing nonce", "GET", "/api/inventory", "", signed("GET", "/api/inventory", "", "", ts, "nonce-missing-0001")[:2], 400, "MALFORMED_CREDENTIALS"},
		{"signature not hex", "GET", "/api/inventory", "", append(signed("GET", "/api/inventory", "", "", ts, "nonce-hex-00000001")[:3], "X-Signature: "+strings.Repeat("zz", 32)), 400, "MALFORMED_CREDENTIALS"},
		{"signature and bearer", "GET", "/api/inventory", "", append(signed("GET", "/api/inventory", "", "", ts, "nonce-both-0000001"), bearer(partnerKey)...), 400, "MALFORMED_CREDENTIALS"},
		{"two Authorization headers", "GET", "/api/inventory", "", append(bearer(partnerKey), bearer(envKey)...), 400, "MALFORMED_CREDENTIALS"},
		{"token in the query string", "GET", "/api/inventory?access_token=" + partnerKey, "", nil, 400, "MALFORMED_CREDENTIALS"},
		{"token in the query string beside a header", "GET", "/api/inventory?access_token=" + partnerKey, "", bearer(partnerKey), 400, "MALFORMED_CREDENTIALS"},
		{"token in the query string, name escaped", "GET", "/api/inventory?access%5Ftoken=" + partnerKey, "", nil, 400, "MALFORMED_CREDENTIALS"},
		{"token in the query string, letter escaped", "GET", "/api/inventory?pageSize=1&%61ccess_token=" + partnerKey, "", bearer(partnerKey), 400, "MALFORMED_CREDENTIALS"},
		{"120 KB header", "GET", "/api/inventory", "", bearer(strings.Repeat("a", 120<<10)), 431, "REQUEST_HEADER_FIELDS_TOO_LARGE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(tt.method, tt.path, "", tt.body, tt.header...)
			code := ""
			if r.status >= 400 && r.status != 431 || strings.Contains(r.header.Get("Content-Type"), "problem") {
				code, _ = r.json(t)["code"].(string)
			}
			if r.status != tt.status || code != tt.code {
				t.Fatalf("%s %s = %d %q (%s); want %d %q", tt.method, tt.path, r.status, code, r.body, tt.status, tt.code)
			}
			if r.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %q", r.header.Get("WWW-Authenticate"))
			}
			for _, secret := range []string{partnerKey, envKey, oldKey, appSecret, "eyJ"} {
				if strings.Contains(string(r.body), secret) {
					t.Errorf("the answer holds a secret (%.8s…): %s", secret, r.body)
				}
			}
		})
	}
}

// TestJWTPrincipal: a JWT's claims become the principal the upstream
// receives.
func TestJWTPrincipal(t *testing.T) {
	iss := authtest.NewIssuer()
	h := credentialHarness(t, iss)
	c := authtest.Claims(time.Now(), "carol", "customer", "reader")
	c["plan"], c["tenant"] = "pro", "acme"
	var got []string
	h.inv.listItems = listItemsRecording(&got)
	r := h.do("GET", "/api/inventory", "", "", "Authorization: Bearer "+iss.Mint(authtest.KidRSA, c))
	if r.status != 200 || strings.Join(got, ",") != "jwt:carol,customer" {
		t.Fatalf("GET = %d %s; upstream saw %v, want jwt:carol,customer", r.status, r.body, got)
	}
}

// listItemsRecording answers ListItems and records the subject and role
// metadata the call carried.
func listItemsRecording(got *[]string) func(context.Context, *inventoryv1.ListItemsRequest) (*inventoryv1.ListItemsResponse, error) {
	return func(ctx context.Context, _ *inventoryv1.ListItemsRequest) (*inventoryv1.ListItemsResponse, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		*got = append(md.Get("x-portico-subject"), md.Get("x-portico-role")...)
		return &inventoryv1.ListItemsResponse{}, nil
	}
}

// x509PublicPEM is the RSA public key as PEM: the bytes an HS/RS
// confusion attack uses as the HMAC secret.
func x509PublicPEM(t *testing.T, iss *authtest.Issuer) []byte {
	der, err := x509.MarshalPKIXPublicKey(iss.RSAPublic())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// TestPolicyFromConfig: a configured policy replaces the built-in roles;
// what no rule covers is denied to everyone (403), and keys come from
// files too.
func TestPolicyFromConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte("file-key-0001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Auth.Tokens = nil
		c.Auth.SignedApps = config.SignedAppsConfig{}
		c.Auth.APIKeys = []config.APIKeyConfig{{Key: "file:" + path, Subject: "acme", Roles: []string{"partner"}}}
		c.Auth.Policy = []config.PolicyRuleConfig{
			{Roles: []string{"partner"}, Allow: []string{"GET /api/inventory/**", "portico.order.v1.OrderService/CreateOrder"}},
		}
	}})
	okStubs(h)
	for _, tt := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/api/inventory", "", 200},
		{"HEAD", "/api/inventory/a", "", 200},
		{"POST", "/api/orders", orderBody, 201},
		{"GET", "/api/orders", "", 403},
		{"PATCH", "/api/inventory/a", `{"name":"A"}`, 403},
		{"GET", "/api/nowhere", "", 404},
	} {
		r := h.do(tt.method, tt.path, "file-key-0001", tt.body, "Idempotency-Key: p1")
		if r.status != tt.want {
			t.Errorf("%s %s = %d %s, want %d", tt.method, tt.path, r.status, r.body, tt.want)
		}
	}
	warnings := strings.Join(Warnings(h.cfg), "\n")
	if !strings.Contains(warnings, "no rule covers GET /api/orders (") || strings.Contains(warnings, "no rule covers POST /api/orders (") {
		t.Errorf("Warnings() = %s", warnings)
	}
}

// TestGrantedRole: a caller holding several roles calls each route in the
// first of them the policy grants there, and that is the one role the
// service receives (it checks roles too): [reader admin] reads as reader
// and updates an item as admin, instead of being refused by the service.
func TestGrantedRole(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	record := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		mu.Lock()
		seen = append(seen, strings.Join(md.Get(callmeta.RoleKey), ","))
		mu.Unlock()
		return h(ctx, req)
	}
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Auth.APIKeys = []config.APIKeyConfig{{Key: "two-roles-key-0001", Subject: "ops", Roles: []string{callmeta.RoleReader, callmeta.RoleAdmin}}}
	}, serve: map[string]grpc.UnaryServerInterceptor{"inventory": record}})
	okStubs(h)
	for _, tt := range []struct{ method, path, body, want string }{
		{"GET", "/api/inventory/a", "", callmeta.RoleReader},
		{"PATCH", "/api/inventory/a", `{"name":"A"}`, callmeta.RoleAdmin},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		r := h.do(tt.method, tt.path, "two-roles-key-0001", tt.body)
		mu.Lock()
		got := slices.Clone(seen)
		mu.Unlock()
		if r.status != 200 || len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s %s = %d, upstream saw roles %q; want 200 and %q", tt.method, tt.path, r.status, got, tt.want)
		}
	}
}
