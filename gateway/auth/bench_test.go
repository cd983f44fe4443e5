package auth_test

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/auth/authtest"
)

// BenchmarkAPIKey: one bearer API key through the Chain, 8 keys
// configured (each compared in constant time).
func BenchmarkAPIKey(b *testing.B) {
	var keys []auth.APIKey
	for i := range 8 {
		keys = append(keys, auth.APIKey{Hash: sha256.Sum256([]byte("bench-key-000" + string(rune('0'+i)))),
			Principal: auth.NewPrincipal("s", []string{"reader"}, "", "", "")})
	}
	k, err := auth.NewAPIKeys(keys, nil)
	if err != nil {
		b.Fatal(err)
	}
	c := &auth.Chain{Keys: k}
	r, _ := http.NewRequest(http.MethodGet, "http://edge/api/inventory", nil)
	r.Header.Set("Authorization", "Bearer bench-key-0005")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Authenticate(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignedApp: one signed POST with a 78-byte body: headers
// parsed, body read and hashed, HMAC compared, nonce claimed (in memory).
func BenchmarkSignedApp(b *testing.B) {
	now := time.Unix(1_800_000_000, 0)
	s, err := auth.NewSignedApps(auth.SignedAppsConfig{Now: func() time.Time { return now },
		Apps: []auth.App{{ID: "app", Secret: []byte("bench-secret-00001"), Principal: auth.NewPrincipal("app", []string{"reader"}, "", "", "")}}})
	if err != nil {
		b.Fatal(err)
	}
	c := &auth.Chain{Apps: s}
	const body = `{"lines":[{"sku":"keyboard-001","quantity":1}],"paymentMethod":"pm_card_ok"}`
	// Each request needs a fresh nonce and an unread body: they are built
	// in batches with the timer stopped (stopping it per request would
	// cost more than the check it measures; building all b.N up front kept
	// them all live, and the collector's scanning of them was most of the
	// figure).
	const batch = 1024
	reqs := make([]*http.Request, 0, batch)
	b.ReportAllocs()
	for n := 0; n < b.N; {
		b.StopTimer()
		reqs = reqs[:0]
		for len(reqs) < batch && n+len(reqs) < b.N {
			i := n + len(reqs)
			r, _ := http.NewRequest(http.MethodPost, "http://edge/api/orders", strings.NewReader(body))
			for _, kv := range authtest.SignedHeaders("bench-secret-00001", "app", "POST", "/api/orders", "", []byte(body), now.Unix(), "bench-nonce-"+strings.Repeat("0", 8)+itoa(i)) {
				k, v, _ := strings.Cut(kv, ": ")
				r.Header.Set(k, v)
			}
			reqs = append(reqs, r)
		}
		n += len(reqs)
		b.StartTimer()
		for _, r := range reqs {
			if _, err := c.Authenticate(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var out []byte
	for ; i > 0; i /= 10 {
		out = append([]byte{digits[i%10]}, out...)
	}
	return string(out)
}

func benchJWT(b *testing.B, kid string) {
	iss := authtest.NewIssuer()
	keys := auth.NewJWKSURL(iss.Serve(b), auth.JWKSOptions{})
	v := newVerifier(b, keys, nil)
	c := &auth.Chain{JWT: v}
	r, _ := http.NewRequest(http.MethodGet, "http://edge/api/inventory", nil)
	r.Header.Set("Authorization", "Bearer "+iss.Mint(kid, authtest.Claims(time.Now(), "u", "reader")))
	if _, err := c.Authenticate(r); err != nil { // fetch the JWKS once
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Authenticate(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJWTRS256 and BenchmarkJWTES256: one JWT through the Chain,
// keys cached.
func BenchmarkJWTRS256(b *testing.B) { benchJWT(b, authtest.KidRSA) }
func BenchmarkJWTES256(b *testing.B) { benchJWT(b, authtest.KidEC) }

// BenchmarkMemoryNoncesFull: a claim in a store full of live nonces (an
// app that signed MaxNonces requests within the window): refused, at a
// cost that must not grow with the store.
func BenchmarkMemoryNoncesFull(b *testing.B) {
	now := time.Unix(1_000_000, 0)
	m := &auth.MemoryNonces{Max: 1 << 16, Now: func() time.Time { return now }}
	for i := range m.Max {
		if _, err := m.Claim(b.Context(), "app\x00fill-"+strconv.Itoa(i), time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Claim(b.Context(), "app\x00one-more-nonce", time.Minute); !errors.Is(err, auth.ErrNonceStoreFull) {
			b.Fatalf("Claim = %v, want ErrNonceStoreFull", err)
		}
	}
}

// BenchmarkMemoryNoncesHeld: the heap one held nonce costs, for the
// longest nonce (128 characters) of the longest app id (64): what a full
// store of DefaultMaxNonces weighs, divided by that count.
func BenchmarkMemoryNoncesHeld(b *testing.B) {
	const n = 1 << 14
	app := strings.Repeat("a", 64)
	var perNonce float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m := &auth.MemoryNonces{}
		for i := range n {
			nonce := strconv.Itoa(i) + strings.Repeat("n", 120)
			if _, err := m.Claim(b.Context(), app+"\x00"+nonce, time.Minute); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perNonce = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(m)
	}
	b.ReportMetric(perNonce, "B/nonce")
}
