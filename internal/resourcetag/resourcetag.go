// Package resourcetag computes and checks the AIP-154 entity tags of the
// services' resources (inventory Item, order Order, payment Payment).
//
// A resource's etag is a hash of its own message as the service answers
// it, every field but etag itself: it changes whenever anything a client
// can read of the resource changes, and is the same on every replica and
// every read of the same stored row, without a version column (the row's
// update time is one of the hashed fields, so two successive states never
// share a tag in practice). It is computed from the stored row inside the
// write transaction that checks it, so check and write are one step.
//
// The tag is 22 characters of base64url (128 bits of SHA-256 of the
// message's deterministic wire form): printable ASCII without '"', so the
// REST edge sends it as the strong ETag "<etag>" and a gRPC client reads
// it from the message's etag field. A different build may marshal a
// message differently and so change every tag once; the only effect is
// one 200 instead of 304, or one 412 the client resolves by reading again.
//
// A change is conditional when the request's etag field is set or, when it
// is empty, when the call carries the metadata callmeta.IfMatchKey (what
// the edge forwards from If-Match). Stale then tells the service to refuse a stale tag with
// FAILED_PRECONDITION, reason ETAG_MISMATCH (HTTP 412 at the edge).
package resourcetag

import (
	"context"
	"crypto/sha256"
	"encoding/base64"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// Field is the name AIP-154 gives the etag field, on a resource and on the
// request of a method that changes one.
const Field = "etag"

// Set computes m's etag and stores it in m's etag field; m without a
// string field named etag, or nil, is left alone. It returns m.
func Set[M proto.Message](m M) M {
	r := m.ProtoReflect()
	if !r.IsValid() { // a nil message: nothing to tag
		return m
	}
	fd := r.Descriptor().Fields().ByName(Field)
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return m
	}
	r.Clear(fd)
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil { // a message the service built itself always marshals
		return m
	}
	sum := sha256.Sum256(b)
	r.Set(fd, protoreflect.ValueOfString(base64.RawURLEncoding.EncodeToString(sum[:16])))
	return m
}

// Want returns the etag a change is conditional on: field (the request's
// etag) when set, else the call's callmeta.IfMatchKey metadata; "" means
// unconditional.
func Want(ctx context.Context, field string) string {
	if field != "" {
		return field
	}
	return callmeta.IfMatchFromIncoming(ctx)
}

// Stale reports whether a change conditional on want must be refused:
// want is set and is not current's etag (as Set computes it). tag is
// current's etag. current is not changed.
func Stale(want string, current proto.Message) (tag string, stale bool) {
	fd := current.ProtoReflect().Descriptor().Fields().ByName(Field)
	if want == "" || fd == nil {
		return "", false
	}
	tag = Set(proto.Clone(current)).ProtoReflect().Get(fd).String()
	return tag, want != tag
}

// Mismatch is the reason and message of the error a service answers for a
// Stale change of what (e.g. "item keyboard-001"); its ErrorInfo metadata
// should carry the current tag as "etag".
func Mismatch(what string) (typev1.Reason, string) {
	return typev1.Reason_REASON_ETAG_MISMATCH,
		what + " changed since its etag was read: read it again, then retry with its current etag"
}
