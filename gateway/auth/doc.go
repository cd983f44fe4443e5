// Package auth identifies callers at the edge and applies the coarse,
// data-free authorization the edge is allowed to make.
//
// Authentication: Tokens checks a static bearer token (RFC 6750
// "Authorization: Bearer <token>") against the configured list and yields
// the Principal {Subject, Role}. The scheme matches in any case; one or
// more spaces follow it; spaces and tabs around the value are ignored; a
// token with whitespace inside is malformed (BearerToken). Only a token
// equal, byte for byte, to a configured one authenticates. Presented tokens are hashed (SHA-256) and
// compared with every configured hash in constant time, so neither the
// position of a match nor a token's length leaks through timing. A missing
// or malformed header is ErrNoCredentials; a well-formed but unknown token is
// ErrInvalidCredentials. A JWT verifier can replace Tokens later behind the
// same method set (the edge's Authenticator interface).
//
// Authorization (Allowed) looks only at the role, the HTTP method and the
// path, never at resource data; per-resource decisions (may alice read
// ord-0001?) stay in the services, which receive the principal as gRPC
// metadata. The policy:
//
//	role      methods          paths
//	admin     any              any /api path
//	reader    GET, HEAD        any /api path
//	customer  GET, HEAD        /api/inventory and below (the catalogue)
//	customer  GET, HEAD, POST  /api/orders and below (create, read, cancel)
//	other     nothing
//
// "And below" means the path equals the prefix or continues with "/". Both
// types are safe for concurrent use.
package auth
