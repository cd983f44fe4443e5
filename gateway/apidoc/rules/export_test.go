package rules

import "google.golang.org/protobuf/reflect/protoreflect"

// Maps reports whether Field gives expr, a CEL rule on a field of message
// type md, a JSON Schema form.
func Maps(md protoreflect.MessageDescriptor, expr string) bool {
	_, ok := recognize(md, expr)
	return ok
}

// MapsMask reports whether Mask states expr, a CEL rule on a FieldMask.
func MapsMask(expr string) bool {
	if maskCount.MatchString(expr) {
		return true
	}
	m := maskLen.FindStringSubmatch(expr)
	return m != nil && m[1] == m[2]
}

// ProtoName is protoName, for the property test.
var ProtoName = protoName
