package rules

import (
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// schemaOf is a bare component schema with one empty property per field.
func schemaOf(md protoreflect.MessageDescriptor) *openapi3.Schema {
	s := &openapi3.Schema{Properties: openapi3.Schemas{}}
	for i := 0; i < md.Fields().Len(); i++ {
		fd := md.Fields().Get(i)
		p := &openapi3.Schema{}
		if fd.IsList() {
			p.Items = openapi3.NewSchemaRef("#/components/schemas/X", nil)
		}
		s.Properties[fd.JSONName()] = openapi3.NewSchemaRef("", p)
	}
	return s
}

func TestMessage(t *testing.T) {
	create := schemaOf((&orderv1.CreateOrderRequest{}).ProtoReflect().Descriptor())
	Message((&orderv1.CreateOrderRequest{}).ProtoReflect().Descriptor(), create)
	line := schemaOf((&orderv1.OrderLine{}).ProtoReflect().Descriptor())
	Message((&orderv1.OrderLine{}).ProtoReflect().Descriptor(), line)
	order := schemaOf((&orderv1.Order{}).ProtoReflect().Descriptor())
	Message((&orderv1.Order{}).ProtoReflect().Descriptor(), order)
	prop := func(s *openapi3.Schema, n string) *openapi3.Schema { return s.Properties[n].Value }
	u := func(p *uint64) uint64 {
		if p == nil {
			return 0
		}
		return *p
	}
	f := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"required create", slices.Sorted(slices.Values(create.Required)), []string{"lines", "paymentMethod"}},
		{"minItems", prop(create, "lines").MinItems, uint64(1)},
		{"maxItems", u(prop(create, "lines").MaxItems), uint64(50)},
		{"minLength", prop(create, "paymentMethod").MinLength, uint64(1)},
		{"maxLength", u(prop(create, "paymentMethod").MaxLength), uint64(64)},
		{"pattern", prop(line, "sku").Pattern, "^[a-z0-9-]*$"},
		{"minimum", f(prop(line, "quantity").Min), 1.0},
		{"maximum", f(prop(line, "quantity").Max), 1000.0},
		{"required line", slices.Sorted(slices.Values(line.Required)), []string{"quantity", "sku"}},
		{"output only", prop(order, "id").ReadOnly, true},
		{"settable", prop(order, "paymentMethod").ReadOnly, false},
		{"no rules", prop(order, "paymentMethod").Pattern, ""},
	}
	for _, tt := range tests {
		if !equal(tt.got, tt.want) {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func equal(a, b any) bool {
	as, ok1 := a.([]string)
	bs, ok2 := b.([]string)
	if ok1 && ok2 {
		return slices.Equal(as, bs)
	}
	return a == b
}

func TestNilSafe(t *testing.T) {
	Message(nil, &openapi3.Schema{})
	Field(nil, &openapi3.Schema{})
	Message((&orderv1.Order{}).ProtoReflect().Descriptor(), nil)
}
