package protoopt_test

import (
	"slices"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/portico-gateway/portico/gateway/protoopt"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

func TestSettable(t *testing.T) {
	tests := []struct {
		name string
		md   protoreflect.MessageDescriptor
		want []string
	}{
		{"item: sku immutable, stock counts and time output-only", (&inventoryv1.Item{}).ProtoReflect().Descriptor(), []string{"name", "unitPrice", "available"}},
		{"a request without behaviors: every field", (&orderv1.GetOrderRequest{}).ProtoReflect().Descriptor(), []string{"id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := protoopt.Settable(tt.md); !slices.Equal(got, tt.want) {
				t.Errorf("Settable(%s) = %v, want %v", tt.md.FullName(), got, tt.want)
			}
		})
	}
}

func TestBehaviors(t *testing.T) {
	item := (&inventoryv1.Item{}).ProtoReflect().Descriptor().Fields()
	if got := protoopt.Behaviors(item.ByName("reserved")); !slices.Equal(got, []annotations.FieldBehavior{annotations.FieldBehavior_OUTPUT_ONLY}) {
		t.Errorf("Behaviors(Item.reserved) = %v, want [OUTPUT_ONLY]", got)
	}
	if got := protoopt.Extension(nil, annotations.E_FieldBehavior); got != nil {
		t.Errorf("Extension(nil) = %v, want nil", got)
	}
}

func TestEdgeUnset(t *testing.T) {
	md := inventoryv1.File_portico_inventory_v1_inventory_proto.Services().Get(0).Methods().ByName("ListItems")
	if got := protoopt.Edge(md); got.GetLocation() != "" || got.GetIdempotencyKey() || len(got.GetErrors()) != 0 {
		t.Errorf("Edge(ListItems) = %v, want no location, key or errors", got)
	}
	if got := protoopt.Edge(nil); got != nil {
		t.Errorf("Edge(nil) = %v, want nil", got)
	}
}
