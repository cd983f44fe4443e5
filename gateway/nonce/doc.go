// Package nonce remembers the nonces of signed requests (HMAC-signed
// apps), so a captured request cannot be replayed: the first Claim of a key
// is fresh, every later one within its time to live is a replay.
//
// Redis is the store shared by every edge: Claim is one SET NX PX, so two
// edges can never both see the same nonce as fresh. When Redis cannot
// answer (down, or slower than the timeout) Claim fails closed: it returns
// an error wrapping ErrUnavailable, and the edge must refuse the request
// with 503 SERVICE_UNAVAILABLE and a Retry-After (UnavailableRetryAfter),
// never accept an unchecked nonce. The in-memory store and the interface
// the signature verifier consumes belong to package auth (helper authn);
// the edge wires this store in when redis.url is set, at merge.
//
// A Redis is safe for concurrent use.
package nonce
