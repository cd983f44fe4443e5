package auth

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// DefaultMaxTokenBytes bounds a bearer token; a longer one is refused
// before any parsing.
const DefaultMaxTokenBytes = 8 << 10

// Chain picks the authenticator for the credential a request carries:
//
//	X-App-Id, X-Timestamp, X-Nonce, X-Signature   Apps (signed apps)
//	Authorization: Bearer <JWT>                   JWT, when set
//	Authorization: Bearer <key>                   Keys (API keys)
//
// A bearer token is a JWT when JWT is set and the token has the JWS
// compact shape (three base64url parts, the first starting "eyJ"). Before
// any of them, the request is refused (ErrMalformed) when it sends
// credentials in the query string (access_token, RFC 6750 section 2.3:
// they leak into logs and browser history), more than one Authorization
// header, or a signature header beside an Authorization header. Nil
// members are credential kinds not configured: a request of that kind is
// ErrInvalidCredentials. Safe for concurrent use.
type Chain struct {
	Keys *APIKeys
	JWT  *JWTVerifier
	Apps *SignedApps
	// MaxTokenBytes bounds a bearer token; zero means DefaultMaxTokenBytes.
	MaxTokenBytes int
}

// Authenticate returns the principal of r's credential.
func (c *Chain) Authenticate(r *http.Request) (Principal, error) {
	if err := queryCredentials(r.URL.RawQuery); err != nil {
		return Principal{}, err
	}
	auths := r.Header.Values("Authorization")
	signed := hasSignatureHeaders(r.Header)
	switch {
	case len(auths) > 1:
		return Principal{}, fail(ErrMalformed, "Send one Authorization header.")
	case signed && len(auths) == 1:
		return Principal{}, fail(ErrMalformed, "Send either an Authorization header or signature headers, not both.")
	case signed && c.Apps == nil:
		return Principal{}, fail(ErrInvalidCredentials, "Signed requests are not accepted here.")
	case signed:
		return c.Apps.Authenticate(r)
	case len(auths) == 0:
		return Principal{}, ErrNoCredentials
	}
	tok, ok := bearer(auths[0])
	if !ok {
		return Principal{}, ErrNoCredentials
	}
	max := c.MaxTokenBytes
	if max <= 0 {
		max = DefaultMaxTokenBytes
	}
	if len(tok) > max {
		return Principal{}, fail(ErrInvalidCredentials, "The bearer token is longer than "+strconv.Itoa(max)+" bytes.")
	}
	if c.JWT != nil && LooksLikeJWT(tok) {
		return c.JWT.Verify(r.Context(), tok)
	}
	if c.Keys == nil {
		return Principal{}, fail(ErrInvalidCredentials, "The bearer token is not valid.")
	}
	return c.Keys.Verify(tok)
}

// queryCredentials refuses a query string carrying access_token, its
// name escaped or not ("access%5Ftoken" is the same parameter once
// decoded, so the fast path skips only a query with neither).
func queryCredentials(raw string) error {
	if !strings.Contains(raw, "access_token") && !strings.Contains(raw, "%") {
		return nil
	}
	for pair := range strings.SplitSeq(raw, "&") {
		name, _, _ := strings.Cut(pair, "=")
		if n, err := url.QueryUnescape(name); name == "access_token" || err == nil && n == "access_token" {
			return fail(ErrMalformed, "Send credentials in the Authorization header, never in the query string.")
		}
	}
	return nil
}

// LooksLikeJWT reports whether tok has the JWS compact serialization's
// shape: three dot-separated base64url parts, a JSON header first.
func LooksLikeJWT(tok string) bool {
	if !strings.HasPrefix(tok, "eyJ") || strings.Count(tok, ".") != 2 {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
