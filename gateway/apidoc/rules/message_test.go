package rules_test

import (
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/portico-gateway/portico/gateway/apidoc/rules"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// oneTo1e15 matches the decimal strings of 1 to 1e15: Money's own range
// (0 to 1e15) and the charge's CEL rule (at least 1).
const oneTo1e15 = `^(?:[1-9]|[1-9][0-9]{1}|[1-9][0-9]{2}|[1-9][0-9]{3}|[1-9][0-9]{4}|[1-9][0-9]{5}|[1-9][0-9]{6}|[1-9][0-9]{7}|[1-9][0-9]{8}|[1-9][0-9]{9}|[1-9][0-9]{10}|[1-9][0-9]{11}|[1-9][0-9]{12}|[1-9][0-9]{13}|[1-9][0-9]{14}|1000000000000000)$`

// TestMessage: required comes from buf.validate required, field_behavior
// REQUIRED and rules that refuse an absent (zero) value; a property that is
// a $ref keeps its shared target untouched and is wrapped in allOf only when
// its field adds something.
func TestMessage(t *testing.T) {
	ref := func(name string) *openapi3.SchemaRef {
		return &openapi3.SchemaRef{Ref: "#/components/schemas/" + name, Value: &openapi3.Schema{Type: &openapi3.Types{"object"}}}
	}
	str := func() *openapi3.SchemaRef { return openapi3.NewStringSchema().NewRef() }
	tests := []struct {
		name  string
		md    protoreflect.MessageDescriptor
		props openapi3.Schemas
		want  string
	}{
		{name: "create order", md: (&orderv1.CreateOrderRequest{}).ProtoReflect().Descriptor(),
			props: openapi3.Schemas{"lines": openapi3.NewArraySchema().WithItems(&openapi3.Schema{}).NewRef(), "paymentMethod": str()},
			want: `{"required":["lines","paymentMethod"],"properties":{
				"lines":{"type":"array","items":{},"minItems":1,"maxItems":50,"description":"Rule: each SKU must appear at most once.","x-portico-unique-by":"sku"},
				"paymentMethod":{"type":"string","minLength":1,"maxLength":64}}}`},
		{name: "create payment: a $ref with a CEL rule is wrapped", md: (&paymentv1.CreatePaymentRequest{}).ProtoReflect().Descriptor(),
			props: openapi3.Schemas{"amount": ref("Money")},
			want: `{"required":["orderId","amount","paymentMethod"],"properties":{
				"amount":{"allOf":[{"$ref":"#/components/schemas/Money"},
					{"type":"object","required":["amountMinor"],"properties":{"amountMinor":{"type":"string","pattern":"` + oneTo1e15 + `"}}}],
					"description":"Rule: amount_minor must be at least 1."}}}`},
		{name: "item: output only, the sku's rules refuse absent, a required name is not empty", md: (&inventoryv1.Item{}).ProtoReflect().Descriptor(),
			props: openapi3.Schemas{"sku": str(), "name": str(), "reserved": openapi3.NewStringSchema().WithFormat("int64").NewRef(), "updateTime": ref("Timestamp")},
			want: `{"required":["sku","name","unitPrice"],"properties":{
				"sku":{"type":"string","minLength":1,"maxLength":64,"pattern":"^[a-z0-9-]*$"},
				"name":{"type":"string","minLength":1,"maxLength":200},
				"reserved":{"type":"string","format":"int64","readOnly":true},
				"updateTime":{"allOf":[{"$ref":"#/components/schemas/Timestamp"}],"readOnly":true}}}`},
		{name: "a $ref with nothing to add stays a $ref", md: (&orderv1.OrderLine{}).ProtoReflect().Descriptor(),
			props: openapi3.Schemas{"sku": str()},
			want:  `{"required":["sku","quantity"],"properties":{"sku":{"type":"string","minLength":1,"maxLength":64,"pattern":"^[a-z0-9-]*$"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &openapi3.Schema{Properties: tt.props}
			rules.Message(tt.md, s)
			got, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			_ = json.Unmarshal(got, &g)
			if err := json.Unmarshal([]byte(tt.want), &w); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("Message(%s) (-want +got):\n%s", tt.md.FullName(), diff)
			}
		})
	}
	// The shared targets are untouched.
	m := ref("Money")
	rules.Message((&paymentv1.CreatePaymentRequest{}).ProtoReflect().Descriptor(), &openapi3.Schema{Properties: openapi3.Schemas{"amount": m}})
	if m.Value.Description != "" || m.Value.ReadOnly || len(m.Value.AllOf) > 0 || len(m.Value.Properties) > 0 || len(m.Value.Required) > 0 {
		t.Errorf("Message changed the shared Money schema: %+v", m.Value)
	}
}
