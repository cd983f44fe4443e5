package rules

import (
	"slices"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// enumRules maps enum rules to an enum of value names when s is a string
// schema (protojson writes names), of numbers otherwise. defined_only keeps
// the values ed declares; in and const keep those listed; not_in drops.
func enumRules(ed protoreflect.EnumDescriptor, r *validate.EnumRules, s *openapi3.Schema) {
	if ed == nil || !(r.GetDefinedOnly() || r.HasConst() || len(r.GetIn()) > 0 || len(r.GetNotIn()) > 0) {
		return
	}
	var keep []protoreflect.EnumNumber
	values := ed.Values()
	for i := range values.Len() {
		n := values.Get(i).Number()
		switch {
		case r.HasConst() && int32(n) != r.GetConst():
		case len(r.GetIn()) > 0 && !slices.Contains(r.GetIn(), int32(n)):
		case slices.Contains(r.GetNotIn(), int32(n)):
		default:
			if !slices.Contains(keep, n) {
				keep = append(keep, n)
			}
		}
	}
	names := s.Type == nil || s.Type.Includes(openapi3.TypeString)
	s.Enum = s.Enum[:0]
	for _, n := range keep {
		if names {
			s.Enum = append(s.Enum, string(values.ByNumber(n).Name()))
		} else {
			s.Enum = append(s.Enum, int(n))
		}
	}
}
