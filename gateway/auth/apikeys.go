package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// APIKey is one accepted API key: the SHA-256 of its secret, the principal
// it stands for and its validity window.
type APIKey struct {
	// Hash is the SHA-256 of the key as the client sends it.
	Hash [sha256.Size]byte
	// Principal is who the key authenticates (Via is set to ViaAPIKey).
	Principal Principal
	// NotAfter, when not zero, is the last instant the key is accepted:
	// rotation gives the old key a NotAfter and adds the new key beside it,
	// so both work during the overlap.
	NotAfter time.Time
}

// APIKeys authenticates API keys sent as "Authorization: Bearer <key>".
// Safe for concurrent use.
type APIKeys struct {
	keys []APIKey
	now  func() time.Time
}

// NewAPIKeys validates keys (unique hashes, valid principals) and returns
// their verifier. now is the clock (nil: time.Now).
func NewAPIKeys(keys []APIKey, now func() time.Time) (*APIKeys, error) {
	if now == nil {
		now = time.Now
	}
	k := &APIKeys{now: now}
	seen := map[[sha256.Size]byte]int{}
	for i, key := range keys {
		if j, dup := seen[key.Hash]; dup {
			return nil, fmt.Errorf("auth: api key %d repeats api key %d", i, j)
		}
		seen[key.Hash] = i
		if err := checkPrincipal(key.Principal); err != nil {
			return nil, fmt.Errorf("auth: api key %d: %w", i, err)
		}
		key.Principal.Via = ViaAPIKey
		k.keys = append(k.keys, key)
	}
	return k, nil
}

func checkPrincipal(p Principal) error {
	if !ValidSubject(p.Subject) {
		return errors.New("subject must be 1-255 printable ASCII characters")
	}
	if len(p.Roles) > MaxRoles {
		return fmt.Errorf("at most %d roles", MaxRoles)
	}
	for _, r := range p.Roles {
		if !ValidRole(r) {
			return fmt.Errorf("role %q: want 1-32 of [a-z0-9_-] starting with a letter", r)
		}
	}
	return nil
}

// Authenticate returns the principal of r's bearer key.
func (k *APIKeys) Authenticate(r *http.Request) (Principal, error) {
	tok, ok := BearerToken(r)
	if !ok {
		return Principal{}, ErrNoCredentials
	}
	return k.Verify(tok)
}

// Verify returns the principal of key. The key is hashed and compared with
// every configured hash in constant time, with no early exit, so neither
// the position of a match nor the key's length shows in the timing.
func (k *APIKeys) Verify(key string) (Principal, error) {
	h := sha256.Sum256([]byte(key))
	found := -1
	for i := range k.keys {
		if subtle.ConstantTimeCompare(h[:], k.keys[i].Hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, fail(ErrInvalidCredentials, "The bearer token is not valid.")
	}
	e := &k.keys[found]
	if !e.NotAfter.IsZero() && k.now().After(e.NotAfter) {
		return Principal{}, fail(ErrExpired, "The API key has expired; use its replacement.")
	}
	return e.Principal, nil
}

// Token is one plaintext static token (the legacy auth.tokens entry).
type Token struct {
	Token, Subject, Role string
}

// Tokens is the legacy name of APIKeys.
type Tokens = APIKeys

// NewTokens returns the verifier of plaintext tokens: non-empty, no
// whitespace, unique.
func NewTokens(ts []Token) (*APIKeys, error) {
	keys := make([]APIKey, len(ts))
	for i, t := range ts {
		if t.Token == "" || strings.ContainsAny(t.Token, " \t\r\n") {
			return nil, fmt.Errorf("auth: token %d: token must be non-empty without whitespace", i)
		}
		keys[i] = APIKey{Hash: sha256.Sum256([]byte(t.Token)), Principal: NewPrincipal(t.Subject, []string{t.Role}, "", "", ViaAPIKey)}
	}
	return NewAPIKeys(keys, nil)
}

// BearerToken returns the token of r's single Authorization header of the
// form "Bearer" 1*SP token (RFC 6750 section 2.1); the scheme matches in
// any case (RFC 9110 section 11.1). Whitespace: spaces and tabs around the
// whole value are ignored (optional whitespace, RFC 9110 section 5.5;
// net/http strips them on the wire, this makes direct callers agree); one
// or more spaces, and only spaces, separate scheme and token; a space or
// tab inside the token makes it no token, never a shorter one.
func BearerToken(r *http.Request) (string, bool) {
	vs := r.Header.Values("Authorization")
	if len(vs) != 1 {
		return "", false
	}
	return bearer(vs[0])
}

func bearer(v string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.Trim(v, " \t"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}
