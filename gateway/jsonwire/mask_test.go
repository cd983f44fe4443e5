package jsonwire

import (
	"slices"
	"strings"
	"testing"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

func TestMaskPaths(t *testing.T) {
	item := (&inventoryv1.Item{}).ProtoReflect().Descriptor()
	tests := []struct {
		name, value string
		want        []string
		wantErr     string
	}{
		{name: "empty", value: ""},
		{name: "json names", value: "name,unitPrice,available", want: []string{"name", "unit_price", "available"}},
		{name: "repeated", value: "name,name", want: []string{"name", "name"}},
		{name: "proto name", value: "unit_price", wantErr: `"unit_price": use unitPrice`},
		{name: "nested", value: "unitPrice.currency", wantErr: "name the member unitPrice, which is set whole"},
		{name: "unknown", value: "name,colour", wantErr: `"colour" is not a member of Item`},
		{name: "empty path", value: "name,", wantErr: "got an empty one"},
		{name: "long unknown clipped", value: strings.Repeat("x", 100), wantErr: strings.Repeat("x", 64) + `..." is not`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MaskPaths(item, tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("MaskPaths(%q) = %v, %v; want an error with %q", tt.value, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("MaskPaths(%q) = %v, %v; want %v", tt.value, got, err, tt.want)
			}
		})
	}
}
