// Package identity carries a verified caller identity between Portico's
// processes: the edge (or a service calling as itself) mints a short-lived
// assertion per call, and every service verifies it before any handler
// runs. A service trusts no other metadata about who is calling.
//
// # The assertion
//
//	x-portico-identity: v1.<key id>.<base64url(payload)>.<base64url(mac)>
//
// The payload states the audience (the called gRPC service, e.g.
// portico.inventory.v1.InventoryService), the subject and role, the
// customer a service acts for (for the record) and the issue and expiry
// times in Unix seconds. The mac is HMAC-SHA256 under a key derived per
// audience, K_aud = HMAC-SHA256(secret, "portico-identity-v1 audience " +
// aud), over everything before it. The trace id travels beside the
// assertion (traceparent; x-trace-id too for a readable id), never inside
// it, so assertions carry no per-request data but the times.
//
// # Why HMAC per audience, not Ed25519 or mTLS
//
// The budget is under 30 µs added per hop. Ed25519 costs about 23 µs to sign
// and 53 µs to verify on this hardware, so it fits only with a cache per
// (principal, audience); HMAC-SHA256 costs about a microsecond each way
// (BenchmarkMint, BenchmarkVerify), so every call gets a fresh assertion and
// nothing is cached. mTLS proves which process is calling, not which
// customer it calls for, so it would still need metadata the callee must
// trust; and it makes a plaintext caller fail the handshake, where Portico
// wants UNAUTHENTICATED (dev stays reachable with plaintext gRPC and
// grpcurl). TLS and mTLS remain available as transport protection
// underneath (the services' --tls-* flags).
//
// The cost of a shared secret is that every holder could mint: a process
// holding the keys can claim any identity to any service. The per-audience
// derivation limits what a leaked assertion is worth (nothing at another
// service), and the ring is small enough to distribute per deployment.
//
// # Keys and rotation
//
// Keys is a ring (ParseKeys reads "ID SECRET [NOT-AFTER]" entries, one per
// line or ';'-separated): the first key signs, every key verifies until its
// NOT-AFTER. To rotate: add the new key as a second entry on every process
// (verifiers now accept it), then move it first and give the old one a
// NOT-AFTER at least DefaultMaxTTL ahead (signers switch; assertions already
// out stay valid through the overlap), then drop the old entry. Minter and
// Verifier SetKeys swap a ring while calls run.
//
// # Using it
//
// A service's server chain runs UnaryServerInterceptor (internal/grpcserver
// installs it): health and reflection stay open; every other call without
// exactly one valid assertion is UNAUTHENTICATED (reason
// UNAUTHENTICATED_CALLER), whatever metadata it carries. The verified
// subject and role replace callmeta.SubjectKey and RoleKey in the handler's
// incoming metadata, and FromContext returns the claims.
//
// An internal Go caller gets an identity with interceptors.WithIdentity on
// Dial or NewUpstream: with a Minter made WithService(name) it calls as that
// service on behalf of its own verified caller (the order service calling
// inventory and payment); with a plain Minter it signs the principal stated
// with callmeta.WithPrincipal on each call's context.
//
// Verifiers allow DefaultLeeway of clock skew and refuse assertions living
// longer than DefaultMaxTTL; minted ones live DefaultTTL. Everything here is
// safe for concurrent use.
package identity
