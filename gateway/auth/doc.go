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
// customer. Per-resource decisions stay in the services, which receive
// the principal as gRPC metadata.
//
// Every type is safe for concurrent use once built.
package auth
