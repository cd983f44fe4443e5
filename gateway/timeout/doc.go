// Package timeout decides how long the edge waits for an upstream.
//
// Every route has a deadline: the route's configured timeout, or the
// client's Grpc-Timeout header clamped to the route's maximum. The header
// uses gRPC's wire format (PROTOCOL-HTTP2.md, "Timeout"): 1 to 8 ASCII
// digits, a positive value, then one unit letter:
//
//	H hours   M minutes   S seconds   m milliseconds   u microseconds   n nanoseconds
//
// Anything else - signs, spaces, a ninth digit, an unknown or missing
// unit - is ErrMalformed, and zero ("0S") is ErrZero, which is also
// ErrMalformed; the edge answers both with 400 INVALID_TIMEOUT, its detail
// saying which, rather than silently using its default. Deadlines only shrink: the edge
// never waits longer than the route maximum whatever the client asks.
package timeout
