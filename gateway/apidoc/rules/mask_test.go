package rules

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

func TestMaskPattern(t *testing.T) {
	names := []string{"name", "unitPrice"}
	tests := []struct {
		name  string
		count int
		want  string
	}{
		{"unbounded", -1, "^((name|unitPrice)(,(name|unitPrice))*)?$"},
		{"none", 0, "^$"},
		{"one", 1, "^(name|unitPrice)?$"},
		{"sixteen", 16, "^((name|unitPrice)(,(name|unitPrice)){0,15})?$"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := maskPattern(names, tt.count); got != tt.want {
				t.Errorf("maskPattern(%v, %d) = %q, want %q", names, tt.count, got, tt.want)
			}
		})
	}
}

// TestMask: UpdateItemRequest.update_mask's rules (at most 16 paths of at
// most 64 characters) and Item's settable members give the pattern; a
// field that is not a FieldMask is left alone.
func TestMask(t *testing.T) {
	req := (&inventoryv1.UpdateItemRequest{}).ProtoReflect().Descriptor()
	item := (&inventoryv1.Item{}).ProtoReflect().Descriptor()
	s := &openapi3.Schema{Type: &openapi3.Types{"string"}, Format: "field-mask"}
	if !Mask(req.Fields().ByName("update_mask"), item, s) {
		t.Fatal("Mask(update_mask) = false, want true")
	}
	if want := "^((name|unitPrice|available)(,(name|unitPrice|available)){0,15})?$"; s.Pattern != want || s.Format != "" {
		t.Errorf("Mask(update_mask) pattern %q format %q, want %q and no format", s.Pattern, s.Format, want)
	}
	other := &openapi3.Schema{}
	if Mask(req.Fields().ByName("item"), item, other) || !other.IsEmpty() {
		t.Errorf("Mask(item) = true or changed the schema: %+v", other)
	}
}
