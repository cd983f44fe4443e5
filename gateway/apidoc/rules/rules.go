package rules

import (
	"slices"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/portico-gateway/portico/gateway/protoopt"
)

// Message applies md's rules to s, the component schema of md: required (from buf.validate required and
// google.api.field_behavior REQUIRED), and every field's rules on s.Properties[<json name>] via Field.
func Message(md protoreflect.MessageDescriptor, s *openapi3.Schema) {
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := fd.JSONName()
		if required(fd) && !slices.Contains(s.Required, name) {
			s.Required = append(s.Required, name)
		}
		ref := s.Properties[name]
		switch {
		case ref == nil:
		case ref.Ref != "":
			// The target is shared: give this property its own schema
			// only when the field adds something to it.
			own := &openapi3.Schema{}
			Field(fd, own)
			if !own.IsEmpty() || own.Description != "" {
				own.AllOf = append(openapi3.SchemaRefs{ref}, own.AllOf...)
				s.Properties[name] = &openapi3.SchemaRef{Value: own}
			}
		case ref.Value != nil:
			Field(fd, ref.Value)
		}
	}
	for _, r := range messageRules(md).GetCel() {
		note(s, r)
	}
}

// Field applies fd's buf.validate rules to s (a property or a query/path parameter schema): maxLength, minLength,
// pattern, minimum/maximum (exclusive too), minItems/maxItems, uniqueItems, enum `in`, const; OUTPUT_ONLY -> readOnly.
func Field(fd protoreflect.FieldDescriptor, s *openapi3.Schema) {
	if slices.Contains(behaviors(fd), annotations.FieldBehavior_OUTPUT_ONLY) {
		s.ReadOnly = true
	}
	r := fieldRules(fd)
	if r == nil {
		return
	}
	for _, c := range r.GetCel() {
		note(s, c)
		if fd.Message() != nil && !fd.IsList() && !fd.IsMap() {
			if b, ok := recognize(fd.Message(), c.GetExpression()); ok {
				b.apply(s)
			}
		}
		if member, ok := uniqueBy(fd, c.GetExpression()); ok {
			if s.Extensions == nil {
				s.Extensions = map[string]any{}
			}
			s.Extensions[UniqueByExtension] = member
		}
	}
	switch {
	case fd.IsList():
		list(fd, r.GetRepeated(), s)
	case fd.IsMap():
		if m := r.GetMap(); m != nil {
			s.MinProps = m.GetMinPairs()
			if m.HasMaxPairs() {
				s.MaxProps = ptr(m.GetMaxPairs())
			}
		}
	default:
		scalar(fd, r, s)
		// required on a string without presence means not empty: an
		// absent string and "" read alike.
		if r.GetRequired() && !fd.HasPresence() && (fd.Kind() == protoreflect.StringKind || fd.Kind() == protoreflect.BytesKind) && s.MinLength < 1 {
			s.MinLength = 1
		}
	}
}

// list applies repeated rules to s, and the item rules to s.Items when it
// is inline.
func list(fd protoreflect.FieldDescriptor, r *validate.RepeatedRules, s *openapi3.Schema) {
	if r == nil {
		return
	}
	s.MinItems = r.GetMinItems()
	if r.HasMaxItems() {
		s.MaxItems = ptr(r.GetMaxItems())
	}
	if r.GetUnique() {
		s.UniqueItems = true
	}
	if it := r.GetItems(); it != nil && s.Items != nil && s.Items.Ref == "" && s.Items.Value != nil {
		for _, c := range it.GetCel() {
			note(s.Items.Value, c)
		}
		scalar(fd, it, s.Items.Value)
	}
}

// scalar applies the rules of one value of fd's kind.
func scalar(fd protoreflect.FieldDescriptor, r *validate.FieldRules, s *openapi3.Schema) {
	switch {
	case r.GetString() != nil:
		stringRules(r.GetString(), s)
	case r.GetEnum() != nil:
		enumRules(fd.Enum(), r.GetEnum(), s)
	case r.GetBool() != nil && r.GetBool().HasConst():
		s.Enum = []any{r.GetBool().GetConst()}
	default:
		numberRules(fd, r, s)
	}
}

// note appends a CEL rule's message (or expression) to s's description, so
// a reader sees the rule in words (a mapped rule's pattern is hard to read).
func note(s *openapi3.Schema, r *validate.Rule) {
	text := r.GetMessage()
	if text == "" {
		text = r.GetExpression()
	}
	if text == "" {
		return
	}
	if s.Description != "" {
		s.Description += "\n\n"
	}
	s.Description += "Rule: " + text + "."
}

// Required reports whether a client must send fd (a body member or a query
// parameter): see required.
func Required(fd protoreflect.FieldDescriptor) bool { return required(fd) }

// required reports whether a client must send fd: the field is marked
// required, or it has no presence and its rules refuse its zero value (an
// absent field reads as zero, so absent is as bad as zero).
func required(fd protoreflect.FieldDescriptor) bool {
	r := fieldRules(fd)
	if r.GetRequired() || slices.Contains(behaviors(fd), annotations.FieldBehavior_REQUIRED) {
		return true
	}
	if r == nil || fd.HasPresence() || r.GetIgnore() == validate.Ignore_IGNORE_IF_ZERO_VALUE || r.GetIgnore() == validate.Ignore_IGNORE_ALWAYS {
		return false
	}
	return refusesZero(fd, r)
}

func fieldRules(fd protoreflect.FieldDescriptor) *validate.FieldRules {
	r, _ := extension(fd.Options(), validate.E_Field).(*validate.FieldRules)
	return r
}

func messageRules(md protoreflect.MessageDescriptor) *validate.MessageRules {
	r, _ := extension(md.Options(), validate.E_Message).(*validate.MessageRules)
	return r
}

func behaviors(fd protoreflect.FieldDescriptor) []annotations.FieldBehavior {
	return protoopt.Behaviors(fd)
}

func extension(opts proto.Message, xt protoreflect.ExtensionType) any {
	return protoopt.Extension(opts, xt)
}

func ptr[T any](v T) *T { return &v }
