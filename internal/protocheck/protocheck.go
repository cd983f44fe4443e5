// Package protocheck enforces the buf.validate rules declared in proto/ on a
// request, so every bound (lengths, patterns, list sizes, ranges) is written
// once, in the contract, and each service that stores a field checks it.
//
// Check adds each broken rule to an rpcerr.Violations as one field violation
// named by its proto field path ("lines[0].sku", "payment_method"), the way
// the services name hand-checked fields, so the edge turns both into the same
// 400 with JSON field names. A service calls Check first and returns when it
// found anything; its hand-written checks then cover only what the rules
// cannot say (cross-field and state rules, idempotency metadata).
//
// Rules are compiled once per message type by protovalidate's global
// validator; Check is safe for concurrent use.
package protocheck

import (
	"errors"

	"buf.build/go/protovalidate"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Check records every rule msg breaks in v. It returns an error only when
// the rules themselves cannot be evaluated (a rule that does not compile, a
// bug caught by this package's tests): INTERNAL, never the request's fault.
func Check(v *rpcerr.Violations, msg proto.Message) error {
	err := protovalidate.Validate(msg)
	if err == nil {
		return nil
	}
	var ve *protovalidate.ValidationError
	if !errors.As(err, &ve) {
		return status.Error(codes.Internal, "request rules cannot be evaluated")
	}
	for _, x := range ve.Violations {
		v.Add(protovalidate.FieldPathString(x.Proto.GetField()), x.Proto.GetMessage())
	}
	return nil
}

// Request returns INVALID_ARGUMENT listing every rule msg breaks (as
// rpcerr.Violations.Err does), or nil when it keeps them all.
func Request(msg proto.Message) error {
	var v rpcerr.Violations
	if err := Check(&v, msg); err != nil {
		return err
	}
	return v.Err()
}

// Valid reports whether msg keeps every rule, for a value that did not come
// as msg, such as the id inside a page token: checked against the rule of
// the field it came from, not a second copy of it.
func Valid(msg proto.Message) bool { return protovalidate.Validate(msg) == nil }
