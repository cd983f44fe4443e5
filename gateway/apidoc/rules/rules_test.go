package rules

import (
	"encoding/json"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// testField builds, at run time, a message with one field "value" of type
// typ (repeated when list) carrying rules and behaviors, and returns the
// field. The options travel as bytes, as they do in a descriptor read from
// a file, so Field's parsing of unknown extensions is tested too.
func testField(t *testing.T, typ descriptorpb.FieldDescriptorProto_Type, list bool, r *validate.FieldRules, b ...annotations.FieldBehavior) protoreflect.FieldDescriptor {
	t.Helper()
	opts := &descriptorpb.FieldOptions{}
	if r != nil {
		proto.SetExtension(opts, validate.E_Field, r)
	}
	if len(b) > 0 {
		proto.SetExtension(opts, annotations.E_FieldBehavior, b)
	}
	raw, err := proto.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	opaque := &descriptorpb.FieldOptions{}
	if err := (proto.UnmarshalOptions{Resolver: &protoregistry.Types{}}).Unmarshal(raw, opaque); err != nil {
		t.Fatal(err)
	}
	label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	if list {
		label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	}
	f := &descriptorpb.FieldDescriptorProto{
		Name: proto.String("value"), JsonName: proto.String("value"), Number: proto.Int32(1),
		Label: label.Enum(), Type: typ.Enum(), Options: opaque,
	}
	if typ == descriptorpb.FieldDescriptorProto_TYPE_ENUM {
		f.TypeName = proto.String(".rulestest.Colour")
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("rulestest.proto"), Package: proto.String("rulestest"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("M"), Field: []*descriptorpb.FieldDescriptorProto{f}}},
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Colour"), Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("COLOUR_UNSPECIFIED"), Number: proto.Int32(0)},
			{Name: proto.String("COLOUR_RED"), Number: proto.Int32(1)},
			{Name: proto.String("COLOUR_BLUE"), Number: proto.Int32(2)},
		}}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().Get(0).Fields().Get(0)
}

const (
	tString = descriptorpb.FieldDescriptorProto_TYPE_STRING
	tInt32  = descriptorpb.FieldDescriptorProto_TYPE_INT32
	tInt64  = descriptorpb.FieldDescriptorProto_TYPE_INT64
	tUint64 = descriptorpb.FieldDescriptorProto_TYPE_UINT64
	tDouble = descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
	tBool   = descriptorpb.FieldDescriptorProto_TYPE_BOOL
	tEnum   = descriptorpb.FieldDescriptorProto_TYPE_ENUM
	tBytes  = descriptorpb.FieldDescriptorProto_TYPE_BYTES
)

func str(r *validate.StringRules) *validate.FieldRules {
	return validate.FieldRules_builder{String: r}.Build()
}

func typed(t string) *openapi3.Schema { return &openapi3.Schema{Type: &openapi3.Types{t}} }

// TestField: each rule kind lands on the schema keyword that means the
// same, compared as the JSON the document would carry.
func TestField(t *testing.T) {
	tests := []struct {
		name   string
		typ    descriptorpb.FieldDescriptorProto_Type
		list   bool
		rules  *validate.FieldRules
		behave []annotations.FieldBehavior
		schema *openapi3.Schema // before; the field's JSON type
		want   string
	}{
		{name: "no rules", typ: tString, schema: typed("string"), want: `{"type":"string"}`},
		{name: "string lengths", typ: tString, schema: typed("string"),
			rules: str(validate.StringRules_builder{MinLen: proto.Uint64(1), MaxLen: proto.Uint64(64)}.Build()),
			want:  `{"type":"string","minLength":1,"maxLength":64}`},
		{name: "string len", typ: tString, schema: typed("string"),
			rules: str(validate.StringRules_builder{Len: proto.Uint64(3)}.Build()),
			want:  `{"type":"string","minLength":3,"maxLength":3}`},
		{name: "string pattern", typ: tString, schema: typed("string"),
			rules: str(validate.StringRules_builder{Pattern: proto.String("^[a-z]*$")}.Build()),
			want:  `{"type":"string","pattern":"^[a-z]*$"}`},
		{name: "string prefix and pattern", typ: tString, schema: typed("string"),
			rules: str(validate.StringRules_builder{Pattern: proto.String("^[a-z.]*$"), Prefix: proto.String("pm.")}.Build()),
			want:  `{"type":"string","pattern":"^[a-z.]*$","allOf":[{"pattern":"^pm\\."}]}`},
		{name: "string suffix", typ: tString, schema: typed("string"),
			rules: str(validate.StringRules_builder{Suffix: proto.String("-001")}.Build()),
			want:  `{"type":"string","pattern":"-001$"}`},
		{name: "string in", typ: tString, schema: typed("string"),
			rules: str(validate.StringRules_builder{In: []string{"a", "b"}}.Build()),
			want:  `{"type":"string","enum":["a","b"]}`},
		{name: "string const", typ: tString, schema: typed("string"),
			rules: str(validate.StringRules_builder{Const: proto.String("x")}.Build()),
			want:  `{"type":"string","enum":["x"]}`},
		{name: "string not in", typ: tString, schema: typed("string"),
			rules: str(validate.StringRules_builder{NotIn: []string{"root"}}.Build()),
			want:  `{"type":"string","not":{"enum":["root"]}}`},
		{name: "string email", typ: tString, schema: typed("string"),
			rules: str(validate.StringRules_builder{Email: proto.Bool(true)}.Build()),
			want:  `{"type":"string","format":"email"}`},
		{name: "string uuid", typ: tString, schema: typed("string"),
			rules: str(validate.StringRules_builder{Uuid: proto.Bool(true)}.Build()),
			want:  `{"type":"string","format":"uuid"}`},
		{name: "string byte lengths have no equivalent", typ: tString, schema: typed("string"),
			rules: str(validate.StringRules_builder{MaxBytes: proto.Uint64(10)}.Build()),
			want:  `{"type":"string"}`},
		{name: "int32 range", typ: tInt32, schema: typed("integer"),
			rules: validate.FieldRules_builder{Int32: validate.Int32Rules_builder{Gte: proto.Int32(1), Lte: proto.Int32(1000)}.Build()}.Build(),
			want:  `{"type":"integer","minimum":1,"maximum":1000}`},
		{name: "int32 exclusive range", typ: tInt32, schema: typed("integer"),
			rules: validate.FieldRules_builder{Int32: validate.Int32Rules_builder{Gt: proto.Int32(0), Lt: proto.Int32(10)}.Build()}.Build(),
			want:  `{"type":"integer","minimum":0,"exclusiveMinimum":true,"maximum":10,"exclusiveMaximum":true}`},
		{name: "int32 in", typ: tInt32, schema: typed("integer"),
			rules: validate.FieldRules_builder{Int32: validate.Int32Rules_builder{In: []int32{1, 2}}.Build()}.Build(),
			want:  `{"type":"integer","enum":[1,2]}`},
		{name: "int32 not in", typ: tInt32, schema: typed("integer"),
			rules: validate.FieldRules_builder{Int32: validate.Int32Rules_builder{NotIn: []int32{0}}.Build()}.Build(),
			want:  `{"type":"integer","not":{"enum":[0]}}`},
		{name: "int64 as integer", typ: tInt64, schema: typed("integer"),
			rules: validate.FieldRules_builder{Int64: validate.Int64Rules_builder{Gte: proto.Int64(0), Lte: proto.Int64(1_000_000_000)}.Build()}.Build(),
			want:  `{"type":"integer","minimum":0,"maximum":1000000000}`},
		{name: "int64 as string", typ: tInt64, schema: typed("string"),
			rules: validate.FieldRules_builder{Int64: validate.Int64Rules_builder{Gte: proto.Int64(0), Lte: proto.Int64(1000)}.Build()}.Build(),
			want:  `{"type":"string","pattern":"^(?:[0-9]|[1-9][0-9]{1}|[1-9][0-9]{2}|1000)$"}`},
		{name: "int64 as string, in", typ: tInt64, schema: typed("string"),
			rules: validate.FieldRules_builder{Int64: validate.Int64Rules_builder{In: []int64{5, 7}}.Build()}.Build(),
			want:  `{"type":"string","enum":["5","7"]}`},
		{name: "uint64 as string, gt", typ: tUint64, schema: typed("string"),
			rules: validate.FieldRules_builder{Uint64: validate.UInt64Rules_builder{Gt: proto.Uint64(18446744073709551613)}.Build()}.Build(),
			want:  `{"type":"string","pattern":"^(?:1844674407370955161[4-5])$"}`},
		{name: "double range", typ: tDouble, schema: typed("number"),
			rules: validate.FieldRules_builder{Double: validate.DoubleRules_builder{Gt: proto.Float64(0.5), Lte: proto.Float64(2.5)}.Build()}.Build(),
			want:  `{"type":"number","minimum":0.5,"exclusiveMinimum":true,"maximum":2.5}`},
		{name: "bool const", typ: tBool, schema: typed("boolean"),
			rules: validate.FieldRules_builder{Bool: validate.BoolRules_builder{Const: proto.Bool(true)}.Build()}.Build(),
			want:  `{"type":"boolean","enum":[true]}`},
		{name: "enum defined only", typ: tEnum, schema: typed("string"),
			rules: validate.FieldRules_builder{Enum: validate.EnumRules_builder{DefinedOnly: proto.Bool(true)}.Build()}.Build(),
			want:  `{"type":"string","enum":["COLOUR_UNSPECIFIED","COLOUR_RED","COLOUR_BLUE"]}`},
		{name: "enum not in", typ: tEnum, schema: typed("string"),
			rules: validate.FieldRules_builder{Enum: validate.EnumRules_builder{DefinedOnly: proto.Bool(true), NotIn: []int32{0}}.Build()}.Build(),
			want:  `{"type":"string","enum":["COLOUR_RED","COLOUR_BLUE"]}`},
		{name: "enum in, numbers", typ: tEnum, schema: typed("integer"),
			rules: validate.FieldRules_builder{Enum: validate.EnumRules_builder{In: []int32{2}}.Build()}.Build(),
			want:  `{"type":"integer","enum":[2]}`},
		{name: "repeated", typ: tString, list: true,
			schema: &openapi3.Schema{Type: &openapi3.Types{"array"}, Items: openapi3.NewSchemaRef("", typed("string"))},
			rules: validate.FieldRules_builder{Repeated: validate.RepeatedRules_builder{MinItems: proto.Uint64(1), MaxItems: proto.Uint64(50), Unique: proto.Bool(true),
				Items: str(validate.StringRules_builder{MaxLen: proto.Uint64(8)}.Build())}.Build()}.Build(),
			want: `{"type":"array","uniqueItems":true,"minItems":1,"maxItems":50,"items":{"type":"string","maxLength":8}}`},
		{name: "cel goes to the description", typ: tString, schema: typed("string"),
			rules: validate.FieldRules_builder{Cel: []*validate.Rule{validate.Rule_builder{Id: proto.String("x"), Message: proto.String("must be odd"), Expression: proto.String("size(this) % 2 == 1")}.Build()}}.Build(),
			want:  `{"type":"string","description":"Rule: must be odd."}`},
		{name: "bytes rules have no equivalent", typ: tBytes, schema: typed("string"),
			rules: validate.FieldRules_builder{Bytes: validate.BytesRules_builder{MaxLen: proto.Uint64(4)}.Build()}.Build(),
			want:  `{"type":"string"}`},
		{name: "output only", typ: tString, schema: typed("string"),
			behave: []annotations.FieldBehavior{annotations.FieldBehavior_OUTPUT_ONLY}, want: `{"type":"string","readOnly":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd := testField(t, tt.typ, tt.list, tt.rules, tt.behave...)
			Field(fd, tt.schema)
			if diff := cmp.Diff(tt.want, jsonOf(t, tt.schema), cmp.Transformer("json", func(s string) any {
				var v any
				_ = json.Unmarshal([]byte(s), &v)
				return v
			})); diff != "" {
				t.Errorf("Field(%s) schema (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func jsonOf(t *testing.T, s *openapi3.Schema) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
