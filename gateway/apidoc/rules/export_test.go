package rules

import "google.golang.org/protobuf/reflect/protoreflect"

// Maps reports whether Field gives expr, a CEL rule on a field of message
// type md, a JSON Schema form.
func Maps(md protoreflect.MessageDescriptor, expr string) bool {
	_, ok := recognize(md, expr)
	return ok
}
