package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Signature headers of a signed request.
const (
	HeaderAppID     = "X-App-Id"
	HeaderTimestamp = "X-Timestamp"
	HeaderNonce     = "X-Nonce"
	HeaderSignature = "X-Signature"
)

// Signed-request defaults; see SignedAppsConfig.
const (
	DefaultSignatureWindow = 300 * time.Second
	DefaultMaxSignedBody   = 1 << 20
)

// App is one signed app: its id, one of its secrets and its principal.
// An app may appear several times with different secrets (rotation).
type App struct {
	// ID is sent as X-App-Id: 1-64 of [A-Za-z0-9._-].
	ID string
	// Secret is the HMAC key, at least 16 bytes.
	Secret []byte
	// Principal is who the app is (Via is set to ViaSignedApp).
	Principal Principal
	// NotAfter, when not zero, is the last instant this secret signs.
	NotAfter time.Time
}

// SignedAppsConfig configures SignedApps.
type SignedAppsConfig struct {
	Apps []App
	// Nonces remembers nonces. Nil means a new MemoryNonces (no Since).
	// A store that is a NonceHorizon makes requests signed before its
	// horizon ErrClockSkew.
	Nonces NonceStore
	// Window is how far X-Timestamp may be from now, either way. Zero
	// means DefaultSignatureWindow.
	Window time.Duration
	// MaxBodyBytes bounds the body read to hash it; larger is
	// ErrBodyTooLarge. Zero means DefaultMaxSignedBody.
	MaxBodyBytes int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// SignedApps authenticates requests signed with an app's secret:
//
//	X-App-Id:    the app's id
//	X-Timestamp: Unix seconds, within Window of the edge's clock
//	X-Nonce:     16-128 of [A-Za-z0-9._~-], unique per app within 2 × Window
//	X-Signature: lowercase hex HMAC-SHA256(secret, CanonicalString(...)),
//	             which covers Idempotency-Key too
//
// The body is read once (at most MaxBodyBytes, for a known or an unknown
// app alike), hashed, and put back for the edge to transcode. The signature is compared in constant time; the
// nonce is claimed only after the signature verifies, so a forger cannot
// burn an app's nonces. Safe for concurrent use.
type SignedApps struct {
	cfg  SignedAppsConfig
	apps map[string][]signer
	// stranger stands in for an unknown app: a random secret no request
	// can match, verified like an app's so that both cost the same.
	stranger []signer
}

// signer is one app secret with a pool of HMACs keyed with it, so a
// verification allocates no hash state.
type signer struct {
	App
	macs *sync.Pool // of hash.Hash
}

func (s signer) mac(canonical string, sum []byte) []byte {
	m := s.macs.Get().(hash.Hash)
	m.Reset()
	io.WriteString(m, canonical)
	sum = m.Sum(sum)
	s.macs.Put(m)
	return sum
}

func newSigner(a App) signer {
	secret := slices.Clone(a.Secret)
	return signer{App: a, macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, secret) }}}
}

// randomSecret is the stranger's secret: 32 random bytes, never shown.
func randomSecret() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return b
}

// NewSignedApps validates cfg and returns its verifier.
func NewSignedApps(cfg SignedAppsConfig) (*SignedApps, error) {
	if cfg.Window <= 0 {
		cfg.Window = DefaultSignatureWindow
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxSignedBody
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Nonces == nil {
		cfg.Nonces = &MemoryNonces{}
	}
	s := &SignedApps{cfg: cfg, apps: map[string][]signer{}}
	s.stranger = []signer{newSigner(App{ID: "\x00unknown", Secret: randomSecret()})}
	for i, a := range cfg.Apps {
		switch {
		case !validToken(a.ID, 1, 64):
			return nil, fmt.Errorf("auth: app %d: id must be 1-64 of [A-Za-z0-9._~-]", i)
		case len(a.Secret) < 16:
			return nil, fmt.Errorf("auth: app %q: secret must be at least 16 bytes", a.ID)
		case slices.ContainsFunc(s.apps[a.ID], func(b signer) bool { return hmac.Equal(a.Secret, b.Secret) }):
			return nil, fmt.Errorf("auth: app %q: secret repeated", a.ID)
		}
		if err := checkPrincipal(a.Principal); err != nil {
			return nil, fmt.Errorf("auth: app %q: %w", a.ID, err)
		}
		a.Principal.Via = ViaSignedApp
		s.apps[a.ID] = append(s.apps[a.ID], newSigner(a))
	}
	return s, nil
}

// SignatureHeaders are a signed request's parsed headers.
type SignatureHeaders struct {
	AppID     string
	Timestamp int64
	Nonce     string
	Signature [sha256.Size]byte
	// IdempotencyKey is the Idempotency-Key header, "" without one: it is
	// signed too (CanonicalString).
	IdempotencyKey string
}

// headerIdempotencyKey is signed with the rest (CanonicalString).
const headerIdempotencyKey = "Idempotency-Key"

func hasSignatureHeaders(h http.Header) bool {
	for _, k := range []string{HeaderAppID, HeaderTimestamp, HeaderNonce, HeaderSignature} {
		if len(h.Values(k)) > 0 {
			return true
		}
	}
	return false
}

// ParseSignatureHeaders reads the four signature headers: each sent
// exactly once and well formed, or ErrMalformed.
func ParseSignatureHeaders(h http.Header) (SignatureHeaders, error) {
	var out SignatureHeaders
	one := func(k string) (string, error) {
		vs := h.Values(k)
		if len(vs) != 1 {
			return "", fail(ErrMalformed, "Send "+k+" exactly once.")
		}
		return vs[0], nil
	}
	id, err := one(HeaderAppID)
	if err != nil {
		return out, err
	}
	if !validToken(id, 1, 64) {
		return out, fail(ErrMalformed, HeaderAppID+" must be 1-64 of [A-Za-z0-9._~-].")
	}
	ts, err := one(HeaderTimestamp)
	if err != nil {
		return out, err
	}
	if len(ts) == 0 || len(ts) > 12 || strings.Trim(ts, "0123456789") != "" {
		return out, fail(ErrMalformed, HeaderTimestamp+" must be Unix seconds, 1-12 digits.")
	}
	out.Timestamp, _ = strconv.ParseInt(ts, 10, 64)
	nonce, err := one(HeaderNonce)
	if err != nil {
		return out, err
	}
	if !validToken(nonce, 16, 128) {
		return out, fail(ErrMalformed, HeaderNonce+" must be 16-128 of [A-Za-z0-9._~-].")
	}
	sig, err := one(HeaderSignature)
	if err != nil {
		return out, err
	}
	if len(sig) != 2*sha256.Size || strings.ToLower(sig) != sig {
		return out, fail(ErrMalformed, HeaderSignature+" must be 64 lowercase hex digits.")
	}
	if _, err := hex.Decode(out.Signature[:], []byte(sig)); err != nil {
		return out, fail(ErrMalformed, HeaderSignature+" must be 64 lowercase hex digits.")
	}
	keys := h.Values(headerIdempotencyKey)
	if len(keys) > 1 {
		return out, fail(ErrMalformed, "Send "+headerIdempotencyKey+" at most once on a signed request.")
	}
	if len(keys) == 1 {
		out.IdempotencyKey = keys[0]
	}
	out.AppID, out.Nonce = id, nonce
	return out, nil
}

// CanonicalString is what a signed request signs, seven lines joined by
// "\n" with no trailing newline:
//
//	METHOD                 upper case, as sent
//	/escaped/path          as sent, without the query
//	a=1&b=2                the query's name=value pairs as sent (still
//	                       escaped), sorted bytewise, joined by "&"; empty
//	                       pairs dropped; "" without a query
//	1767225600             X-Timestamp
//	nonce                  X-Nonce
//	e3b0c442...            lowercase hex SHA-256 of the body as sent
//	                       (the empty body's hash without one)
//	order-key-1            Idempotency-Key as sent; "" without one
//
// The idempotency key is signed so that a replay cannot choose a new one:
// with another key the service would take it for a new request.
func CanonicalString(method, escapedPath, rawQuery, timestamp, nonce string, bodyHash [sha256.Size]byte, idempotencyKey string) string {
	var b strings.Builder
	b.Grow(len(method) + len(escapedPath) + len(rawQuery) + len(timestamp) + len(nonce) + 2*sha256.Size + len(idempotencyKey) + 6)
	b.WriteString(method)
	b.WriteByte('\n')
	b.WriteString(escapedPath)
	b.WriteByte('\n')
	b.WriteString(SortedQuery(rawQuery))
	b.WriteByte('\n')
	b.WriteString(timestamp)
	b.WriteByte('\n')
	b.WriteString(nonce)
	b.WriteByte('\n')
	var hx [2 * sha256.Size]byte
	hex.Encode(hx[:], bodyHash[:])
	b.Write(hx[:])
	b.WriteByte('\n')
	b.WriteString(idempotencyKey)
	return b.String()
}

// SortedQuery returns raw's non-empty "&"-separated pairs sorted bytewise.
func SortedQuery(raw string) string {
	if raw == "" {
		return ""
	}
	if !strings.Contains(raw, "&") {
		return raw
	}
	pairs := strings.Split(raw, "&")
	pairs = slices.DeleteFunc(pairs, func(p string) bool { return p == "" })
	slices.Sort(pairs)
	return strings.Join(pairs, "&")
}

// Sign returns the lowercase hex HMAC-SHA256 of canonical under secret.
func Sign(secret []byte, canonical string) string {
	m := hmac.New(sha256.New, secret)
	io.WriteString(m, canonical)
	return hex.EncodeToString(m.Sum(nil))
}

// Authenticate verifies r's signature and returns the app's principal.
func (s *SignedApps) Authenticate(r *http.Request) (Principal, error) {
	h, err := ParseSignatureHeaders(r.Header)
	if err != nil {
		return Principal{}, err
	}
	now := s.cfg.Now()
	if skew := now.Sub(time.Unix(h.Timestamp, 0)); skew > s.cfg.Window || skew < -s.cfg.Window {
		return Principal{}, fail(ErrClockSkew, "X-Timestamp is more than "+strconv.Itoa(int(s.cfg.Window.Seconds()))+
			" seconds from the gateway's clock ("+strconv.FormatInt(now.Unix(), 10)+"); sign with a current time.")
	}
	if err := s.horizon(h.Timestamp); err != nil {
		return Principal{}, err
	}
	badSignature := func() error {
		return fail(ErrInvalidCredentials, "The signature does not verify (unknown app, wrong secret, or a request changed after signing).")
	}
	// The body is read and hashed before the app is looked up, and a
	// stranger's signature is computed like an app's: an unknown app id
	// costs what a known one does, so the time to answer tells nothing
	// about which ids exist. (What an unauthenticated client can make the
	// edge read is bounded there: body limit, rate, per-address cap.)
	sum, err := s.hashBody(r)
	if err != nil {
		return Principal{}, err
	}
	apps := s.apps[h.AppID]
	if len(apps) == 0 {
		apps = s.stranger
	}
	canonical := CanonicalString(r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get(HeaderTimestamp), h.Nonce, sum, h.IdempotencyKey)
	found := -1
	var mac [sha256.Size]byte
	for i := range apps { // no early exit: every secret of the app costs the same
		if hmac.Equal(apps[i].mac(canonical, mac[:0]), h.Signature[:]) {
			found = i
		}
	}
	if found < 0 || apps[found].ID != h.AppID {
		return Principal{}, badSignature()
	}
	app := &apps[found]
	if !app.NotAfter.IsZero() && now.After(app.NotAfter) {
		return Principal{}, fail(ErrExpired, "The app secret that signed the request has expired; sign with its replacement.")
	}
	ok, err := s.cfg.Nonces.Claim(r.Context(), h.AppID+"\x00"+h.Nonce, 2*s.cfg.Window)
	switch {
	case err != nil:
		return Principal{}, &Failure{Err: ErrUnavailable, Detail: "The gateway cannot check nonces right now; retry shortly.", Cause: err}
	case !ok:
		return Principal{}, fail(ErrReplayed, "The nonce was used before; sign each request with a new X-Nonce.")
	}
	return app.Principal, nil
}

// horizon refuses a timestamp from before the nonce store began
// remembering (NonceHorizon): its nonce may have been claimed in a store
// that is gone, such as the memory of an edge since restarted.
func (s *SignedApps) horizon(ts int64) error {
	hz, ok := s.cfg.Nonces.(NonceHorizon)
	if !ok {
		return nil
	}
	// Whole seconds, as X-Timestamp: a request signed in the second the
	// store began passes.
	since := hz.RemembersSince()
	if since.IsZero() || ts >= since.Unix() {
		return nil
	}
	return fail(ErrClockSkew, "X-Timestamp is before the gateway began remembering nonces ("+
		strconv.FormatInt(since.Unix(), 10)+"), so a replay could not be told apart; sign with a current time.")
}

// hashBody reads r's body once, at most MaxBodyBytes, returns its
// SHA-256 and puts it back for the edge to transcode.
func (s *SignedApps) hashBody(r *http.Request) ([sha256.Size]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return sha256.Sum256(nil), nil
	}
	tooLarge := fail(ErrBodyTooLarge, "The request body exceeds "+strconv.FormatInt(s.cfg.MaxBodyBytes, 10)+" bytes.")
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return [sha256.Size]byte{}, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
	_ = r.Body.Close()
	switch {
	case err != nil:
		return [sha256.Size]byte{}, fail(ErrMalformed, "The request body could not be read.")
	case int64(len(data)) > s.cfg.MaxBodyBytes:
		return [sha256.Size]byte{}, tooLarge
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
	return sha256.Sum256(data), nil
}

// validToken: min-max characters of [A-Za-z0-9._~-].
func validToken(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '~' || c == '-') {
			return false
		}
	}
	return true
}

// ValidAppID reports whether id can be an X-App-Id: 1-64 of
// [A-Za-z0-9._~-].
func ValidAppID(id string) bool { return validToken(id, 1, 64) }
