// Package auth identifies callers at the edge and applies the coarse,
// data-free authorization the edge is allowed to make.
//
// Authentication: each kind of credential is one authenticator, and Chain
// picks the one the request's credential needs:
//
//   - APIKeys: "Authorization: Bearer <key>", the key hashed (SHA-256)
//     and compared with every configured hash in constant time; a key may
//     carry a NotAfter, so rotation overlaps old and new keys.
//   - JWTVerifier: "Authorization: Bearer <JWT>", verified with golang-jwt
//     v5 against keys from a JWK Set (JWKS, a file or a URL, read through
//     keyfunc): asymmetric algorithms only, from an allow-list; kid, iss,
//     aud and exp required; nbf and iat with a leeway; claims mapped to a
//     Principal.
//   - SignedApps: HMAC-SHA256 request signatures (X-App-Id, X-Timestamp,
//     X-Nonce, X-Signature over CanonicalString), a timestamp window and
//     a NonceStore against replays.
//   - Tickets: a stream ticket in the query (?ticket=), for a browser's
//     EventSource, which cannot send Authorization. Not in Chain: the edge
//     asks Tickets first when the query has one (HasTicket). See below.
//
// Every failure wraps one sentinel error (ErrNoCredentials,
// ErrInvalidCredentials, ErrMalformed, ErrExpired, ErrReplayed,
// ErrClockSkew, ErrBodyTooLarge, ErrUnavailable) in a *Failure whose
// Detail is safe to show the client: it never holds the credential.
//
// A Principal is {Subject, Role(s), Tenant, Plan, Via}.
//
// Authorization (Policy) grants roles routes, by path template, route
// group, RPC or service (Rule); a route no rule covers is denied to
// everyone. DefaultRules are the built-in roles admin, reader and
// customer; apart from admin's "*" they name the built-in services' RPCs,
// so a service loaded at run time is admin's only until auth.policy
// grants it. Per-resource decisions stay in the services, which receive
// the principal as gRPC metadata.
//
// # Stream tickets
//
// A browser opens Server-Sent Events with EventSource, which sends no
// custom header, so a bearer token cannot reach the edge that way; putting
// the token itself in the URL would leak it into logs, history and
// Referer, which is why access_token is refused. Instead an authenticated
// POST /api/stream-tickets {"path": ...} returns a ticket, and the stream
// is opened at path?ticket=<ticket>. A ticket is
//
//	pst1.<base64url JSON: subject, roles, tenant, plan, path, iat, exp, id>.<base64url HMAC-SHA256>
//
// signed with Tickets.Keys[0] and verified with any of Keys: the edge
// derives them from its identity keys (every edge of a deployment reads
// the same file, so any edge verifies any edge's ticket, and a rotation
// keeps the old key verifying), or without identity keys uses a random key
// of its process (tickets then work on that edge only). Redeem refuses,
// each a 401 problem, a ticket that is expired (exp, 30 s by default, at
// most 5 m), for another path, forged, or used before: its id is claimed
// in the NonceStore (the signed requests' store, shared through Redis with
// redis.url), so it opens one stream on one edge, once. Nothing is stored
// per issued ticket, so issuing is bounded only by the caller's rate
// limits; the claims of used ones live until the ticket's expiry and are
// bounded by the store (MemoryNonces.Max). A ticket issued before an
// in-memory store began remembering is refused (NonceHorizon), so a
// restart cannot make a used ticket new again. The edge strips the ticket
// from the query once it has authenticated the request, and the access
// line and span never hold a query.
//
// Cookies were the alternative: EventSource sends them with
// withCredentials, but a cookie session needs CSRF defences on every
// unsafe method and SameSite care for cross-origin apps, and a cookie
// outlives the stream. A ticket is a capability for one GET, which changes
// nothing, so it needs no CSRF defence.
//
// Every type is safe for concurrent use once built.
package auth
