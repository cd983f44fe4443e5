// Package protoopt reads the options the edge and its OpenAPI document
// both act on from proto descriptors: extensions such as protovalidate's
// rules, and AIP-203 field behaviors, with what they imply for an update
// (which members a client may set).
package protoopt

import (
	"slices"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Extension returns xt's value in opts, nil when opts does not set it.
// Options of a descriptor built at run time (protodesc) hold extensions
// as unknown fields; they are parsed with the global registry, where the
// generated option packages are linked.
func Extension(opts proto.Message, xt protoreflect.ExtensionType) any {
	if opts == nil || !opts.ProtoReflect().IsValid() {
		return nil
	}
	if len(opts.ProtoReflect().GetUnknown()) > 0 {
		b, err := proto.Marshal(opts)
		if err != nil {
			return nil
		}
		c := opts.ProtoReflect().New().Interface()
		if err := (proto.UnmarshalOptions{Resolver: protoregistry.GlobalTypes}).Unmarshal(b, c); err != nil {
			return nil
		}
		opts = c
	}
	if !proto.HasExtension(opts, xt) {
		return nil
	}
	return proto.GetExtension(opts, xt)
}

// Behaviors returns fd's google.api.field_behavior values.
func Behaviors(fd protoreflect.FieldDescriptor) []annotations.FieldBehavior {
	b, _ := Extension(fd.Options(), annotations.E_FieldBehavior).([]annotations.FieldBehavior)
	return b
}

// Settable returns the lowerCamel names of md's fields a client may name
// in an update mask, or set in an update's body: all but the OUTPUT_ONLY,
// IMMUTABLE and IDENTIFIER ones (AIP-203), in field order.
func Settable(md protoreflect.MessageDescriptor) []string {
	var out []string
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !slices.ContainsFunc(Behaviors(fd), func(b annotations.FieldBehavior) bool {
			return b == annotations.FieldBehavior_OUTPUT_ONLY || b == annotations.FieldBehavior_IMMUTABLE || b == annotations.FieldBehavior_IDENTIFIER
		}) {
			out = append(out, fd.JSONName())
		}
	}
	return out
}
