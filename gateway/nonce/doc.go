// Package nonce remembers the nonces of signed requests (HMAC-signed
// apps), so a captured request cannot be replayed: the first Claim of a key
// is fresh, every later one within its time to live is a replay.
//
// Redis is the store shared by every edge: Claim is one script run (SET
// NX PX, after the epoch check below), so two edges can never both see the
// same nonce as fresh. Each attempt waits up to DefaultTimeout (250ms),
// and a claim without an answer is asked once more (Attempts, 2 in all):
// each claim writes its own token, so a retry after a lost reply finds its
// own claim and is fresh. When Redis cannot answer (down, or slower than
// the timeout twice) Claim fails closed: it returns an *UnavailableError
// wrapping ErrUnavailable and saying why, and the edge refuses the request
// with 503 SERVICE_UNAVAILABLE and a Retry-After (UnavailableRetryAfter),
// never accepting an unchecked nonce. The in-memory store and the
// interface the signature verifier consumes belong to package auth; the
// edge uses this store when redis.url is set.
//
// Redis can lose its data (a restart without persistence, a failover, a
// flush), and with it every nonce: the store keeps an epoch marker beside
// the nonces, made by the first claim that finds it missing. On an edge
// that knew the marker, a missing one means a loss: every claim is
// refused (ErrDataLost, an UnavailableError saying when to retry) until
// one nonce ttl (twice the signature window) has passed, as by then every
// nonce claimed before the loss would have expired. An edge that never saw
// the marker takes its absence for a new store. Refusing is chosen over
// remembering recent nonces in each edge's memory, which would not stop a
// replay sent to another edge.
//
// A Redis is safe for concurrent use.
package nonce
