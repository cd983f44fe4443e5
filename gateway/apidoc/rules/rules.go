package rules

import (
	"slices"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Message applies md's rules to s, the component schema of md: required
// (from buf.validate required and google.api.field_behavior REQUIRED), and
// every field's rules on s.Properties[<json name>] via Field.
func Message(md protoreflect.MessageDescriptor, s *openapi3.Schema) {
	if md == nil || s == nil {
		return
	}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		name := fd.JSONName()
		if required(fd) && !slices.Contains(s.Required, name) {
			s.Required = append(s.Required, name)
		}
		if p := s.Properties[name]; p != nil && p.Value != nil && p.Ref == "" {
			Field(fd, p.Value)
		}
	}
}

// Field applies fd's buf.validate rules to s (a property or a query/path
// parameter schema): maxLength, minLength, pattern, minimum/maximum
// (exclusive too), minItems/maxItems, uniqueItems, enum `in`, const;
// OUTPUT_ONLY -> readOnly.
func Field(fd protoreflect.FieldDescriptor, s *openapi3.Schema) {
	if fd == nil || s == nil {
		return
	}
	if behaves(fd, annotations.FieldBehavior_OUTPUT_ONLY) {
		s.ReadOnly = true
	}
	fr := fieldRules(fd)
	if fr == nil {
		return
	}
	if r := fr.GetRepeated(); r != nil {
		s.MinItems = r.GetMinItems()
		if r.HasMaxItems() {
			s.MaxItems = openapi3.Uint64Ptr(r.GetMaxItems())
		}
		s.UniqueItems = r.GetUnique()
		if s.Items != nil && s.Items.Value != nil && s.Items.Ref == "" && r.GetItems() != nil {
			apply(r.GetItems(), s.Items.Value)
		}
		return
	}
	apply(fr, s)
}

// apply maps the scalar rules of fr (the type oneof) onto s.
func apply(fr *validate.FieldRules, s *openapi3.Schema) {
	if str := fr.GetString(); str != nil {
		strings(str, s)
		return
	}
	if e := fr.GetEnum(); e != nil {
		return // enum values are named on the wire; `in` on numbers is left to the service
	}
	typ := fr.ProtoReflect().WhichOneof(fr.ProtoReflect().Descriptor().Oneofs().ByName("type"))
	if typ == nil || typ.Kind() != protoreflect.MessageKind {
		return
	}
	numbers(fr.ProtoReflect().Get(typ).Message(), s)
}

func strings(r *validate.StringRules, s *openapi3.Schema) {
	if r.HasLen() {
		s.MinLength, s.MaxLength = r.GetLen(), openapi3.Uint64Ptr(r.GetLen())
	}
	if r.HasMinLen() {
		s.MinLength = r.GetMinLen()
	}
	if r.HasMaxLen() {
		s.MaxLength = openapi3.Uint64Ptr(r.GetMaxLen())
	}
	if r.HasPattern() {
		s.Pattern = r.GetPattern()
	}
	if r.HasConst() {
		s.Enum = []any{r.GetConst()}
	}
	if in := r.GetIn(); len(in) > 0 {
		s.Enum = nil
		for _, v := range in {
			s.Enum = append(s.Enum, v)
		}
	}
}

// numbers maps the bounds of any numeric rules message (Int32Rules,
// UInt64Rules, DoubleRules, ...): they share the field names.
func numbers(m protoreflect.Message, s *openapi3.Schema) {
	get := func(name protoreflect.Name) (float64, bool) {
		fd := m.Descriptor().Fields().ByName(name)
		if fd == nil || !m.Has(fd) || fd.IsList() {
			return 0, false
		}
		return toFloat(m.Get(fd)), true
	}
	if v, ok := get("gte"); ok {
		s.Min = &v
	}
	if v, ok := get("gt"); ok {
		s.Min, s.ExclusiveMin = &v, openapi3.ExclusiveBound{Bool: openapi3.Ptr(true)}
	}
	if v, ok := get("lte"); ok {
		s.Max = &v
	}
	if v, ok := get("lt"); ok {
		s.Max, s.ExclusiveMax = &v, openapi3.ExclusiveBound{Bool: openapi3.Ptr(true)}
	}
	if v, ok := get("const"); ok {
		s.Min, s.Max = &v, &v
	}
}

func toFloat(v protoreflect.Value) float64 {
	switch x := v.Interface().(type) {
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	case float32:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

func fieldRules(fd protoreflect.FieldDescriptor) *validate.FieldRules {
	opts := fd.Options()
	if opts == nil || !proto.HasExtension(opts, validate.E_Field) {
		return nil
	}
	fr, _ := proto.GetExtension(opts, validate.E_Field).(*validate.FieldRules)
	return fr
}

func required(fd protoreflect.FieldDescriptor) bool {
	return fieldRules(fd).GetRequired() || behaves(fd, annotations.FieldBehavior_REQUIRED)
}

func behaves(fd protoreflect.FieldDescriptor, want annotations.FieldBehavior) bool {
	opts := fd.Options()
	if opts == nil || !proto.HasExtension(opts, annotations.E_FieldBehavior) {
		return false
	}
	fb, _ := proto.GetExtension(opts, annotations.E_FieldBehavior).([]annotations.FieldBehavior)
	return slices.Contains(fb, want)
}
