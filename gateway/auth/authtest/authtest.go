// Package authtest mints credentials for tests of package auth and the
// edge: an issuer with RSA and EC keys, its JWK Set served over HTTP,
// signed JWTs, and signed-app request headers.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/portico-gateway/portico/gateway/auth"
)

// Key ids of an Issuer's keys.
const (
	KidRSA = "rsa-1"
	KidEC  = "ec-1"
	// KidNew is a key an Issuer holds but publishes only after Rotate.
	KidNew = "rsa-2"
)

// Issuer and Audience of the tokens Claims builds.
const (
	Iss = "https://issuer.test"
	Aud = "portico"
)

var (
	keysOnce        sync.Once
	rsaKey, rsaKey2 *rsa.PrivateKey
	ecKey           *ecdsa.PrivateKey
)

// Issuer signs tokens with fixed test keys (generated once per process).
type Issuer struct {
	rotated atomic.Bool
	down    atomic.Bool
	hits    atomic.Int64
}

// NewIssuer returns an issuer publishing KidRSA and KidEC.
func NewIssuer() *Issuer {
	keysOnce.Do(func() {
		rsaKey, _ = rsa.GenerateKey(rand.Reader, 2048)
		rsaKey2, _ = rsa.GenerateKey(rand.Reader, 2048)
		ecKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	})
	return &Issuer{}
}

// RSAPublic returns KidRSA's public key.
func (i *Issuer) RSAPublic() *rsa.PublicKey { return &rsaKey.PublicKey }

// Rotate adds KidNew to the published set.
func (i *Issuer) Rotate() { i.rotated.Store(true) }

// SetDown makes the served JWK Set answer 503 (down) or the keys again.
func (i *Issuer) SetDown(down bool) { i.down.Store(down) }

// Hits returns how many times the JWK Set was fetched.
func (i *Issuer) Hits() int64 { return i.hits.Load() }

// JWKS returns the published JWK Set document.
func (i *Issuer) JWKS() []byte {
	set := jwkset.JWKSMarshal{}
	add := func(key any, kid string, alg jwkset.ALG) {
		j, err := jwkset.NewJWKFromKey(key, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: kid, ALG: alg, USE: jwkset.UseSig}})
		if err != nil {
			panic(err)
		}
		set.Keys = append(set.Keys, j.Marshal())
	}
	add(&rsaKey.PublicKey, KidRSA, jwkset.AlgRS256)
	add(&ecKey.PublicKey, KidEC, jwkset.AlgES256)
	if i.rotated.Load() {
		add(&rsaKey2.PublicKey, KidNew, jwkset.AlgRS256)
	}
	b, _ := json.Marshal(set)
	return b
}

// Serve serves the JWK Set until the test ends and returns its URL.
func (i *Issuer) Serve(t testing.TB) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i.hits.Add(1)
		if i.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(i.JWKS())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Claims returns valid claims for sub with roles: iss Iss, aud Aud, iat
// now, exp in five minutes.
func Claims(now time.Time, sub string, roles ...string) jwt.MapClaims {
	rs := make([]any, len(roles))
	for i, r := range roles {
		rs[i] = r
	}
	return jwt.MapClaims{"iss": Iss, "aud": Aud, "sub": sub, "roles": rs, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
}

// Mint signs claims with the key kid names (RS256 for RSA keys, ES256
// for KidEC); an unknown kid signs with KidRSA's key.
func (i *Issuer) Mint(kid string, claims jwt.MapClaims) string {
	return i.MintWithHeader(kid, claims, nil)
}

// MintWithHeader is Mint with extra JOSE header parameters.
func (i *Issuer) MintWithHeader(kid string, claims jwt.MapClaims, header map[string]any) string {
	var method jwt.SigningMethod = jwt.SigningMethodRS256
	var key any = rsaKey
	switch kid {
	case KidEC:
		method, key = jwt.SigningMethodES256, ecKey
	case KidNew:
		key = rsaKey2
	}
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = kid
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	if err != nil {
		panic(err)
	}
	return s
}

// SignedHeaders returns the signature headers of a request, as
// "Name: value" pairs: app id, Unix timestamp ts, nonce, and the
// signature over the canonical string with secret, for a request without
// an Idempotency-Key.
func SignedHeaders(secret, appID, method, path, rawQuery string, body []byte, ts int64, nonce string) []string {
	return SignedHeadersWithKey(secret, appID, method, path, rawQuery, body, ts, nonce, "")
}

// SignedHeadersWithKey is SignedHeaders for a request with the
// Idempotency-Key idemKey, which is signed too; the pairs include
// "Idempotency-Key: idemKey" when it is not empty.
func SignedHeadersWithKey(secret, appID, method, path, rawQuery string, body []byte, ts int64, nonce, idemKey string) []string {
	t := strconv.FormatInt(ts, 10)
	sig := auth.Sign([]byte(secret), auth.CanonicalString(method, path, rawQuery, t, nonce, sha256.Sum256(body), idemKey))
	h := []string{auth.HeaderAppID + ": " + appID, auth.HeaderTimestamp + ": " + t, auth.HeaderNonce + ": " + nonce, auth.HeaderSignature + ": " + sig}
	if idemKey != "" {
		h = append(h, "Idempotency-Key: "+idemKey)
	}
	return h
}
