package auth_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/auth/authtest"
)

// TestCanonicalString pins the string clients sign (the README's recipe
// builds the same bytes with printf and openssl).
func TestCanonicalString(t *testing.T) {
	const head = "POST\n/api/orders\na=0&a=1&b=2\n1767225600\nn-0123456789abcdef\n" +
		"5041bf1f713df204784353e82f6a4a535931cb64f1f4b4a5aeaffcb720918b22\n"
	// sig is what printf '<want>' | openssl dgst -sha256 -hmac demo-app-secret-0001 prints.
	for _, tt := range []struct{ key, want, sig string }{
		{"", head, "e704cf22fe5bf58b72747e2c568779fcc2f14c153a3d28218dc66ac0a762e4e5"},
		{"order-key-1", head + "order-key-1", "03100ef66a9d8aae7103191746b956491507e6b23db4d419bbec58e60fe3d73a"},
	} {
		got := auth.CanonicalString("POST", "/api/orders", "b=2&a=1&&a=0", "1767225600", "n-0123456789abcdef", sha256.Sum256([]byte(`{"x":1}`)), tt.key)
		if got != tt.want {
			t.Errorf("CanonicalString(key %q) = %q, want %q", tt.key, got, tt.want)
		}
		if sig := auth.Sign([]byte("demo-app-secret-0001"), tt.want); sig != tt.sig {
			t.Errorf("Sign(key %q) = %q, want %q", tt.key, sig, tt.sig)
		}
	}
}

// TestSignedIdempotencyKey: the Idempotency-Key is signed, so a request
// signed with key A fails with key B, without one, or with two; one
// signed without a key fails with a key added.
func TestSignedIdempotencyKey(t *testing.T) {
	now := time.Unix(999_000, 0)
	s := newApps(t, func() time.Time { return now }, nil)
	req := func(signedKey string, sent ...string) *http.Request {
		r, _ := http.NewRequest("POST", "http://edge/api/orders", strings.NewReader(`{"a":1}`))
		nonce := fmt.Sprintf("nonce-idem-%08d", s2n.Add(1))
		for _, kv := range authtest.SignedHeadersWithKey("new-secret-000001", "app", "POST", "/api/orders", "", []byte(`{"a":1}`), now.Unix(), nonce, signedKey) {
			if k, v, _ := strings.Cut(kv, ": "); k != "Idempotency-Key" {
				r.Header.Add(k, v)
			}
		}
		for _, k := range sent {
			r.Header.Add("Idempotency-Key", k)
		}
		return r
	}
	tests := []struct {
		name    string
		r       *http.Request
		wantErr error
	}{
		{"key as signed", req("key-A", "key-A"), nil},
		{"no key, none signed", req(""), nil},
		{"another key", req("key-A", "key-B"), auth.ErrInvalidCredentials},
		{"key dropped", req("key-A"), auth.ErrInvalidCredentials},
		{"key added", req("", "key-B"), auth.ErrInvalidCredentials},
		{"key sent twice", req("key-A", "key-A", "key-B"), auth.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Authenticate(tt.r); !errors.Is(err, tt.wantErr) {
				t.Fatalf("Authenticate = %v; want %v", err, tt.wantErr)
			}
		})
	}
}

// s2n numbers the nonces of TestSignedIdempotencyKey.
var s2n atomic.Int64

func newApps(t *testing.T, now func() time.Time, nonces auth.NonceStore) *auth.SignedApps {
	t.Helper()
	s, err := auth.NewSignedApps(auth.SignedAppsConfig{Now: now, Nonces: nonces, MaxBodyBytes: 64, Apps: []auth.App{
		{ID: "app", Secret: []byte("old-secret-000001"), Principal: auth.NewPrincipal("app", []string{"reader"}, "", "", ""), NotAfter: time.Unix(1_000_000, 0)},
		{ID: "app", Secret: []byte("new-secret-000001"), Principal: auth.NewPrincipal("app", []string{"reader"}, "", "", "")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func signedRequest(secret, method, target, body string, ts int64, nonce string) *http.Request {
	r, _ := http.NewRequest(method, "http://edge"+target, strings.NewReader(body))
	if body == "" {
		r.Body = http.NoBody
	}
	for _, kv := range authtest.SignedHeaders(secret, "app", method, r.URL.EscapedPath(), r.URL.RawQuery, []byte(body), ts, nonce) {
		k, v, _ := strings.Cut(kv, ": ")
		r.Header.Add(k, v)
	}
	return r
}

// TestSignedApps: the window's edges, rotation by not_after, the body
// put back, and a nonce accepted once.
func TestSignedApps(t *testing.T) {
	now := time.Unix(999_000, 0)
	s := newApps(t, func() time.Time { return now }, nil)
	ts := now.Unix()
	tests := []struct {
		name    string
		r       *http.Request
		wantErr error
	}{
		{"new secret", signedRequest("new-secret-000001", "GET", "/api/x?b=1&a=2", "", ts, "nonce-000000000001"), nil},
		{"old secret before not_after", signedRequest("old-secret-000001", "GET", "/api/x", "", ts, "nonce-000000000002"), nil},
		{"window edge past", signedRequest("new-secret-000001", "GET", "/api/x", "", ts-300, "nonce-000000000003"), nil},
		{"window edge future", signedRequest("new-secret-000001", "GET", "/api/x", "", ts+300, "nonce-000000000004"), nil},
		{"past the window", signedRequest("new-secret-000001", "GET", "/api/x", "", ts-301, "nonce-000000000005"), auth.ErrClockSkew},
		{"replay", signedRequest("new-secret-000001", "GET", "/api/x", "", ts, "nonce-000000000001"), auth.ErrReplayed},
		{"wrong secret", signedRequest("bad-secret-000001", "GET", "/api/x", "", ts, "nonce-000000000006"), auth.ErrInvalidCredentials},
		{"body", signedRequest("new-secret-000001", "POST", "/api/x", `{"a":1}`, ts, "nonce-000000000007"), nil},
		{"body too large", signedRequest("new-secret-000001", "POST", "/api/x", strings.Repeat("x", 65), ts, "nonce-000000000008"), auth.ErrBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := s.Authenticate(tt.r)
			if !errors.Is(err, tt.wantErr) || err == nil && (p.Subject != "app" || p.Via != auth.ViaSignedApp) {
				t.Fatalf("Authenticate = %+v, %v; want %v", p, err, tt.wantErr)
			}
		})
	}
	r := signedRequest("new-secret-000001", "POST", "/api/x", `{"a":1}`, ts, "nonce-000000000009")
	if _, err := s.Authenticate(r); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(r.Body); err != nil || string(b) != `{"a":1}` {
		t.Errorf("body after Authenticate = %q, %v; want it put back", b, err)
	}
	later := newApps(t, func() time.Time { return time.Unix(1_000_001, 0) }, nil)
	if _, err := later.Authenticate(signedRequest("old-secret-000001", "GET", "/api/x", "", 1_000_001, "nonce-00000000000a")); !errors.Is(err, auth.ErrExpired) {
		t.Errorf("old secret after not_after = %v, want ErrExpired", err)
	}
}

// TestMemoryNoncesAtomic: of many concurrent claims of one nonce exactly
// one wins; an expired nonce may be claimed again; a full store fails.
func TestMemoryNoncesAtomic(t *testing.T) {
	var now atomic.Int64
	m := &auth.MemoryNonces{Max: 2, Now: func() time.Time { return time.Unix(now.Load(), 0) }}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if ok, err := m.Claim(context.Background(), "k", time.Minute); ok && err == nil {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d concurrent claims won, want 1", wins.Load())
	}
	if ok, _ := m.Claim(context.Background(), "k2", time.Minute); !ok {
		t.Fatal("second key refused")
	}
	if _, err := m.Claim(context.Background(), "k3", time.Minute); !errors.Is(err, auth.ErrNonceStoreFull) {
		t.Fatalf("claim in a full store = %v, want ErrNonceStoreFull", err)
	}
	now.Store(61)
	if ok, err := m.Claim(context.Background(), "k", time.Minute); !ok || err != nil {
		t.Fatalf("claim after expiry = %v, %v; want true", ok, err)
	}
	if m.Len() != 1 {
		t.Errorf("Len = %d after the sweep, want 1", m.Len())
	}
}

// failingNonces is a NonceStore that is down.
type failingNonces struct{}

func (failingNonces) Claim(context.Context, string, time.Duration) (bool, error) {
	return false, errors.New("down")
}

// TestSignedAppsStoreDown: a failing nonce store refuses the request.
func TestSignedAppsStoreDown(t *testing.T) {
	now := time.Unix(999_000, 0)
	s := newApps(t, func() time.Time { return now }, failingNonces{})
	if _, err := s.Authenticate(signedRequest("new-secret-000001", "GET", "/api/x", "", now.Unix(), "nonce-000000000001")); !errors.Is(err, auth.ErrUnavailable) {
		t.Errorf("Authenticate with the store down = %v, want ErrUnavailable", err)
	}
}

func TestParseSignatureHeaders(t *testing.T) {
	good := map[string]string{"X-App-Id": "app", "X-Timestamp": "1767225600", "X-Nonce": "nonce-000000000001", "X-Signature": strings.Repeat("ab", 32)}
	tests := []struct {
		name    string
		mod     func(http.Header)
		wantErr bool
	}{
		{"good", func(http.Header) {}, false},
		{"no app", func(h http.Header) { h.Del("X-App-Id") }, true},
		{"two nonces", func(h http.Header) { h.Add("X-Nonce", "nonce-000000000002") }, true},
		{"short nonce", func(h http.Header) { h.Set("X-Nonce", "short") }, true},
		{"nonce with space", func(h http.Header) { h.Set("X-Nonce", "nonce 00000000001") }, true},
		{"negative timestamp", func(h http.Header) { h.Set("X-Timestamp", "-1767225600") }, true},
		{"long timestamp", func(h http.Header) { h.Set("X-Timestamp", "1234567890123") }, true},
		{"upper-case signature", func(h http.Header) { h.Set("X-Signature", strings.Repeat("AB", 32)) }, true},
		{"short signature", func(h http.Header) { h.Set("X-Signature", "abcd") }, true},
		{"base64 signature", func(h http.Header) { h.Set("X-Signature", strings.Repeat("q83v", 11)) }, true},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range good {
			h.Set(k, v)
		}
		tt.mod(h)
		_, err := auth.ParseSignatureHeaders(h)
		if (err != nil) != tt.wantErr || err != nil && !errors.Is(err, auth.ErrMalformed) {
			t.Errorf("%s: ParseSignatureHeaders = %v, want error %v (ErrMalformed)", tt.name, err, tt.wantErr)
		}
	}
}

// TestMemoryNoncesSweepSchedule: a full store refuses claims until its
// earliest entry expires, whatever order the TTLs were given in, then
// frees exactly the expired entries.
func TestMemoryNoncesSweepSchedule(t *testing.T) {
	var now atomic.Int64
	m := &auth.MemoryNonces{Max: 3, Now: func() time.Time { return time.Unix(now.Load(), 0) }}
	claim := func(key string, ttl time.Duration) error {
		t.Helper()
		ok, err := m.Claim(context.Background(), key, ttl)
		if err == nil && !ok {
			t.Fatalf("Claim(%s) = replay", key)
		}
		return err
	}
	for _, step := range []struct {
		at   int64
		key  string
		ttl  time.Duration
		full bool
	}{
		{0, "a", 30 * time.Second, false},
		{0, "b", 10 * time.Second, false},
		{0, "c", 20 * time.Second, false},
		{0, "d", time.Second, true},   // sweeps, frees nothing; next expiry at 10
		{9, "d", time.Second, true},   // before 10: refused without a sweep
		{10, "d", time.Second, false}, // b expired
		{10, "e", time.Minute, true},  // d expires at 11, first
		{11, "e", time.Minute, false}, // d expired
		{19, "f", time.Minute, true},
		{20, "f", time.Minute, false}, // c expired
	} {
		now.Store(step.at)
		if err := claim(step.key, step.ttl); errors.Is(err, auth.ErrNonceStoreFull) != step.full {
			t.Fatalf("at %d Claim(%s) = %v, want full %v", step.at, step.key, err, step.full)
		}
	}
	if m.Len() != 3 {
		t.Errorf("Len = %d, want 3", m.Len())
	}
}

// readCounter counts the bytes read through it.
type readCounter struct {
	io.ReadCloser
	n int
}

func (c *readCounter) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n += n
	return n, err
}

// TestSignedAppsUnknownAppReadsTheBody: a request naming no configured app
// has its body read and hashed as a known app's is, and an oversized body
// is refused alike, so neither the answer nor its timing tells which app
// ids exist. (The edge bounds what an unauthenticated client can make it
// read: the body limit, http.min_body_rate, shed.max_in_flight_per_client.)
func TestSignedAppsUnknownAppReadsTheBody(t *testing.T) {
	now := time.Unix(999_000, 0)
	s := newApps(t, func() time.Time { return now }, nil)
	tests := []struct {
		name, app, body string
		want            error
	}{
		{"known app, wrong secret", "app", strings.Repeat("x", 60), auth.ErrInvalidCredentials},
		{"unknown app", "no-such-app", strings.Repeat("x", 60), auth.ErrInvalidCredentials},
		{"known app, body too large", "app", strings.Repeat("x", 2000), auth.ErrBodyTooLarge},
		{"unknown app, body too large", "no-such-app", strings.Repeat("x", 2000), auth.ErrBodyTooLarge},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := signedRequest("not-the-secret-01", "POST", "/api/x", tt.body, now.Unix(), fmt.Sprintf("nonce-unknown-app-%d", i))
			r.Header.Set(auth.HeaderAppID, tt.app)
			r.ContentLength = -1 // as a chunked body: the limit is found by reading
			body := &readCounter{ReadCloser: r.Body}
			r.Body = body
			if _, err := s.Authenticate(r); !errors.Is(err, tt.want) {
				t.Fatalf("Authenticate = %v, want %v", err, tt.want)
			}
			if want := min(len(tt.body), 65); body.n != want {
				t.Errorf("%d body bytes read, want %d (as for any app)", body.n, want)
			}
		})
	}
}

// TestSignedAppsReplayAfterRestart: an edge restarted with a fresh store
// in memory cannot know the nonces its predecessor claimed, so it refuses
// a request signed before it began remembering (CLOCK_SKEW) rather than
// accept the replay; a request signed since passes.
func TestSignedAppsReplayAfterRestart(t *testing.T) {
	signedAt := time.Unix(999_000, 0)
	restart := signedAt.Add(20 * time.Second)
	now := restart.Add(10 * time.Second)
	captured := func() *http.Request {
		return signedRequest("new-secret-000001", "GET", "/api/x", "", signedAt.Unix(), "nonce-before-restart")
	}
	before := newApps(t, func() time.Time { return signedAt }, &auth.MemoryNonces{Since: signedAt.Add(-time.Hour)})
	if _, err := before.Authenticate(captured()); err != nil {
		t.Fatalf("Authenticate before the restart = %v", err)
	}
	after := newApps(t, func() time.Time { return now }, &auth.MemoryNonces{Since: restart})
	tests := []struct {
		name    string
		r       *http.Request
		wantErr error
	}{
		{"captured request replayed after the restart", captured(), auth.ErrClockSkew},
		{"signed the second the store began", signedRequest("new-secret-000001", "GET", "/api/x", "", restart.Unix(), "nonce-at-the-restart"), nil},
		{"signed after the restart", signedRequest("new-secret-000001", "GET", "/api/x", "", now.Unix(), "nonce-after-restart0"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := after.Authenticate(tt.r); !errors.Is(err, tt.wantErr) {
				t.Errorf("Authenticate = %v, want %v", err, tt.wantErr)
			}
		})
	}
}
