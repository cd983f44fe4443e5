// Package pagetoken makes and checks the page tokens of Portico's list
// RPCs. A token carries the position the next page starts after (the last
// SKU or id of the page, or an order's create time and id) and an
// HMAC-SHA256 tag over it, truncated to 16 bytes, all in unpadded
// base64url (RFC 4648 section 5). Clients pass a next_page_token back
// unchanged; one they made or changed fails the tag, so a list RPC answers
// it INVALID_ARGUMENT naming page_token and never reads from a position a
// client chose. (Tokens were the bare base64 of the position: readable,
// and craftable.)
//
// A Codec signs under a key derived from a secret and the list's name, so
// a token of one list is refused by another. NewRandom draws the secret
// per process: a token then works only on the process that made it.
// Replicas behind one balancer share a secret (New), so any replica
// accepts another's token.
//
// Decode checks from the cheapest test up: the length first (a huge token
// costs nothing), then the alphabet, the canonical form (the standard
// decoder lets newlines and stray padding bits through), then the tag. It
// does not check the position itself: the list RPC checks it against the
// rule of the field it comes from, e.g.
//
//	after, ok := s.pages.Decode(req.GetPageToken())
//	if !ok || after != "" && !protocheck.Valid(&inventoryv1.GetItemRequest{Sku: after}) {
//		v.Add("page_token", "is not a token from a previous ListItems response")
//	}
//
// A Codec is immutable and safe for concurrent use.
package pagetoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// MaxPosition is the longest position a token carries: 128 bytes, above
// every position Portico hands out (at most a 20-digit time, "/" and a
// 64-character id).
const MaxPosition = 128

// MinSecretLen is the shortest secret New accepts, in bytes.
const MinSecretLen = 16

// tagLen is the length of a token's tag, in bytes (128 bits).
const tagLen = 16

// maxLen is the length of the token of a MaxPosition-byte position.
var maxLen = base64.RawURLEncoding.EncodedLen(MaxPosition + tagLen)

// Codec signs and checks the page tokens of one list.
type Codec struct {
	key []byte // HMAC-SHA256(secret, "portico page token v1 " + list)
}

// New returns the Codec of list (e.g. "portico.order.v1.OrderService/
// ListOrders") under secret, at least MinSecretLen bytes.
func New(secret []byte, list string) (*Codec, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("pagetoken: secret of %d bytes, want at least %d", len(secret), MinSecretLen)
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("portico page token v1 " + list))
	return &Codec{key: m.Sum(nil)}, nil
}

// NewRandom returns the Codec of list under a secret drawn for this
// process.
func NewRandom(list string) *Codec {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)  // crypto/rand.Read never fails (Go 1.24+)
	c, _ := New(secret, list) // cannot fail: the secret is long enough
	return c
}

// NewOrRandom is New under secret, or NewRandom when secret is nil (no
// shared secret configured: tokens work only in this process).
func NewOrRandom(secret []byte, list string) (*Codec, error) {
	if secret == nil {
		return NewRandom(list), nil
	}
	return New(secret, list)
}

// Encode returns the token of pos; "" (no token) for "".
func (c *Codec) Encode(pos string) string {
	if pos == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(append([]byte(pos), c.tag(pos)...))
}

// Decode returns the position tok carries, and "" for no token. ok is
// false for anything Encode cannot have returned for a position of 1 to
// MaxPosition bytes.
func (c *Codec) Decode(tok string) (pos string, ok bool) {
	if tok == "" {
		return "", true
	}
	if len(tok) > maxLen {
		return "", false
	}
	for i := range len(tok) {
		if !urlAlphabet(tok[i]) {
			return "", false
		}
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) <= tagLen || base64.RawURLEncoding.EncodeToString(b) != tok {
		return "", false
	}
	pos = string(b[:len(b)-tagLen])
	if !hmac.Equal(b[len(b)-tagLen:], c.tag(pos)) {
		return "", false
	}
	return pos, true
}

func (c *Codec) tag(pos string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(pos))
	return m.Sum(nil)[:tagLen]
}

// urlAlphabet reports whether c is one of base64url's 64 characters.
func urlAlphabet(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}
