package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/portico-gateway/portico/internal/callmeta"
)

// Errors Authenticate returns.
var (
	// ErrNoCredentials: no usable "Authorization: Bearer" header.
	ErrNoCredentials = errors.New("auth: no bearer token")
	// ErrInvalidCredentials: a bearer token that matches no principal.
	ErrInvalidCredentials = errors.New("auth: unknown bearer token")
)

// Principal is an authenticated caller.
type Principal struct {
	// Subject identifies the caller, e.g. "alice".
	Subject string
	// Role is admin, reader or customer (package callmeta).
	Role string
}

// Token is one configured static token and the principal it stands for.
type Token struct {
	Token, Subject, Role string
}

// Tokens authenticates static bearer tokens.
type Tokens struct {
	entries []entry
}

type entry struct {
	hash [sha256.Size]byte
	p    Principal
}

// NewTokens validates ts and returns an authenticator for them. Tokens must
// be unique and non-empty, subjects printable ASCII, roles known.
func NewTokens(ts []Token) (*Tokens, error) {
	t := &Tokens{}
	seen := map[[sha256.Size]byte]int{}
	for i, tok := range ts {
		if err := check(tok); err != nil {
			return nil, fmt.Errorf("auth: token %d: %w", i, err)
		}
		h := sha256.Sum256([]byte(tok.Token))
		if j, dup := seen[h]; dup {
			return nil, fmt.Errorf("auth: token %d repeats token %d", i, j)
		}
		seen[h] = i
		t.entries = append(t.entries, entry{h, Principal{tok.Subject, tok.Role}})
	}
	return t, nil
}

func check(t Token) error {
	switch {
	case t.Token == "" || strings.ContainsAny(t.Token, " \t\r\n"):
		return errors.New("token must be non-empty without whitespace")
	case !callmeta.ValidValue(t.Subject, 255):
		return errors.New("subject must be 1-255 printable ASCII characters")
	case !KnownRole(t.Role):
		return fmt.Errorf("role %q is not admin, reader or customer", t.Role)
	}
	return nil
}

// KnownRole reports whether role is one Allowed knows.
func KnownRole(role string) bool {
	switch role {
	case callmeta.RoleAdmin, callmeta.RoleReader, callmeta.RoleCustomer:
		return true
	}
	return false
}

// Authenticate returns the principal of r's bearer token.
func (t *Tokens) Authenticate(r *http.Request) (Principal, error) {
	tok, ok := BearerToken(r)
	if !ok {
		return Principal{}, ErrNoCredentials
	}
	h := sha256.Sum256([]byte(tok))
	found := -1
	for i := range t.entries { // no early exit: every entry costs the same
		if subtle.ConstantTimeCompare(h[:], t.entries[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, ErrInvalidCredentials
	}
	return t.entries[found].p, nil
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
	scheme, tok, ok := strings.Cut(strings.Trim(vs[0], " \t"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}
