// Package callmeta defines the gRPC metadata Portico passes between hops and
// reads it back: the caller's principal (set by the edge from a verified
// credential), the request's idempotency key and the entity tag a change is
// conditional on.
//
// The edge never forwards client-supplied metadata. Between hops the
// principal travels as a signed assertion (IdentityKey, package
// interceptors/identity); a service's identity interceptor verifies it and
// replaces SubjectKey and RoleKey with the verified values, so handlers that
// read them here read what the assertion proves, whatever the caller sent.
package callmeta

import (
	"context"
	"slices"

	"google.golang.org/grpc/metadata"
)

// Metadata keys. gRPC metadata keys are lower case.
const (
	// SubjectKey carries the authenticated caller's subject, e.g. "alice".
	SubjectKey = "x-portico-subject"
	// RoleKey carries the caller's role: admin, reader or customer.
	RoleKey = "x-portico-role"
	// IdentityKey carries the caller's signed identity assertion (package
	// interceptors/identity); the trace id travels beside it, not in it.
	IdentityKey = "x-portico-identity"
	// IdempotencyKey carries the client's idempotency key for a write.
	IdempotencyKey = "idempotency-key"
	// IfMatchKey carries the entity tag a change is conditional on (AIP-154
	// etag; the REST edge forwards If-Match here). A service reads it when
	// the request's own etag field is empty.
	IfMatchKey = "if-match"
	// ReplayedKey is the response header a service sets to "true" when it
	// answers a write from an earlier call with the same idempotency key.
	// The REST edge turns it into Idempotent-Replayed: true.
	ReplayedKey = "x-portico-replayed"
)

// Roles a principal can hold.
const (
	RoleAdmin    = "admin"
	RoleReader   = "reader"
	RoleCustomer = "customer"
	// RoleService is a Portico service calling another as itself (the
	// order service reserving stock), never a role the edge grants.
	RoleService = "service"
)

// OrderIDPrefix starts every order id the order service mints ("ord-",
// order.proto). Such an order is the order service's: its saga alone
// charges it and refunds it, so the order's status always tells where its
// money is. The payment service refuses an admin's charge or refund for
// one (cancelling the order refunds it).
const OrderIDPrefix = "ord-"

// MaxIdempotencyKeyLen bounds an idempotency key, in bytes.
const MaxIdempotencyKeyLen = 255

// Principal is who is calling.
type Principal struct {
	Subject string
	Role    string
}

// SeesAll reports whether the principal may read every customer's data.
func (p Principal) SeesAll() bool { return p.Role == RoleAdmin || p.Role == RoleReader }

// PrincipalFromIncoming returns the principal of an incoming call; ok is
// false when no subject was sent, or one that is not a ValidName (it is
// then left out: " alice" is nobody, never alice).
func PrincipalFromIncoming(ctx context.Context) (p Principal, ok bool) {
	p.Subject = first(ctx, SubjectKey)
	p.Role = first(ctx, RoleKey)
	if !ValidName(p.Subject, MaxNameLen) {
		p.Subject = ""
	}
	return p, p.Subject != ""
}

// RoleIn reports whether an incoming call may run a method open to roles:
// its role is one of them, or it carries no principal metadata at all. The
// principal metadata is the verified one (a service's identity step
// replaces whatever the caller sent with the assertion's subject and role,
// both always set), so a call with none can only come from in process,
// without the server chain, or from a local caller of a service started
// without identity keys, which is trusted as sent.
func RoleIn(ctx context.Context, roles ...string) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	if len(md.Get(RoleKey)) == 0 && len(md.Get(SubjectKey)) == 0 {
		return true
	}
	p, _ := PrincipalFromIncoming(ctx)
	return p.Role != "" && slices.Contains(roles, p.Role)
}

// IdempotencyKeyFromIncoming returns the idempotency key of an incoming call,
// or "" when none was sent.
func IdempotencyKeyFromIncoming(ctx context.Context) string {
	return first(ctx, IdempotencyKey)
}

// IfMatchFromIncoming returns the entity tag an incoming call is
// conditional on (IfMatchKey), or "" when none was sent.
func IfMatchFromIncoming(ctx context.Context) string {
	return first(ctx, IfMatchKey)
}

// ValidIdempotencyKey reports whether k is 1-255 printable ASCII characters
// with no space at either end (metadata is read as sent, untrimmed, so a
// blank key is refused here rather than taken for a key).
func ValidIdempotencyKey(k string) bool { return ValidName(k, MaxIdempotencyKeyLen) }

// ValidValue reports whether s is 1-max printable ASCII characters (0x20 to
// 0x7e), so it can travel as a gRPC metadata value unchanged.
func ValidValue(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// MaxNameLen bounds a subject or role, in bytes.
const MaxNameLen = 255

// ValidName reports whether s can name a subject, role, tenant or plan:
// a ValidValue with no space at either end. Names are compared exactly as
// sent (RFC 7519 section 2 for a JWT's sub), so " alice" is refused where
// it is read rather than trimmed into alice.
func ValidName(s string, max int) bool {
	return ValidValue(s, max) && s[0] != ' ' && s[len(s)-1] != ' '
}

// WithPrincipal returns ctx with p appended to the outgoing metadata.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return metadata.AppendToOutgoingContext(ctx, SubjectKey, p.Subject, RoleKey, p.Role)
}

// WithIdempotencyKey returns ctx with key appended to the outgoing metadata.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, IdempotencyKey, key)
}

// HasOutgoingIdempotencyKey reports whether an outgoing call carries an
// idempotency key, which makes it safe to retry.
func HasOutgoingIdempotencyKey(ctx context.Context) bool {
	md, _ := metadata.FromOutgoingContext(ctx)
	return len(md.Get(IdempotencyKey)) > 0
}

func first(ctx context.Context, key string) string {
	vs := metadata.ValueFromIncomingContext(ctx, key)
	if len(vs) == 0 {
		return ""
	}
	return vs[0] // as sent: trimming would make " alice" alice
}
