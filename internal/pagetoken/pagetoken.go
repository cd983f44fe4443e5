// Package pagetoken encodes the page tokens of Portico's list RPCs: the
// unpadded base64url (RFC 4648 section 5) of the position the next page
// starts after, such as the last SKU or id of the page. A token is opaque
// to clients, who pass a next_page_token back unchanged.
//
// Decode accepts only what Encode produces, checked from the cheapest test
// up: the length first (a huge token costs nothing), then the alphabet,
// then the canonical form (the standard decoder lets newlines and stray
// padding bits through). It does not check the position itself: the list
// RPC checks it against the rule of the field it comes from, e.g.
//
//	after, ok := pagetoken.Decode(req.GetPageToken())
//	if !ok || after != "" && !protocheck.Valid(&inventoryv1.GetItemRequest{Sku: after}) {
//		v.Add("page_token", "is not a token from a previous ListItems response")
//	}
//
// Encode and Decode are pure functions, safe for concurrent use.
package pagetoken

import "encoding/base64"

// MaxPosition is the longest position a token carries: 128 bytes, above
// every position Portico hands out (at most a 20-digit time, "/" and a
// 64-character id).
const MaxPosition = 128

// maxLen is the length of the token of a MaxPosition-byte position.
var maxLen = base64.RawURLEncoding.EncodedLen(MaxPosition)

// Encode returns the token of pos; "" (no token) for "".
func Encode(pos string) string { return base64.RawURLEncoding.EncodeToString([]byte(pos)) }

// Decode returns the position tok carries, and "" for no token. ok is
// false for anything Encode cannot have returned for a position of 1 to
// MaxPosition bytes.
func Decode(tok string) (pos string, ok bool) {
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
	if err != nil || Encode(string(b)) != tok {
		return "", false
	}
	return string(b), true
}

// urlAlphabet reports whether c is one of base64url's 64 characters.
func urlAlphabet(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}
