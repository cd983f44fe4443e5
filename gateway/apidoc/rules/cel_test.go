package rules

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// TestRecognize: only `this.<integer field> <op> <integer>` is read as a
// bound, intersected with the kind's range and the field's own range rule
// (Money.amount_minor: 0 to 1e15; Duration's fields have none); every
// other expression is not.
func TestRecognize(t *testing.T) {
	money := (&typev1.Money{}).ProtoReflect().Descriptor()
	dur := (&durationpb.Duration{}).ProtoReflect().Descriptor()
	mask := (&fieldmaskpb.FieldMask{}).ProtoReflect().Descriptor()
	tests := []struct {
		name   string
		md     protoreflect.MessageDescriptor
		expr   string
		sub    string // "" when not recognized
		lo, hi string
	}{
		{"at least", money, "this.amount_minor >= 1", "amount_minor", "1", "1000000000000000"},
		{"at most", money, "this.amount_minor <= 1000000000000", "amount_minor", "0", "1000000000000"},
		{"above", money, "this.amount_minor > 5", "amount_minor", "6", "1000000000000000"},
		{"below", money, "this.amount_minor < 5", "amount_minor", "0", "4"},
		{"equal", money, "this.amount_minor == 7", "amount_minor", "7", "7"},
		{"spaces", money, "  this.amount_minor<=3 ", "amount_minor", "0", "3"},
		{"outside the own range", money, "this.amount_minor < 0", "amount_minor", "0", "-1"},
		{"int64 kind range", dur, "this.seconds >= -5", "seconds", "-5", "9223372036854775807"},
		{"int32 kind range", dur, "this.nanos < 10", "nanos", "-2147483648", "9"},

		{"arithmetic", money, "this.a + this.b <= 3", "", "", ""},
		{"two sub-fields", dur, "this.seconds + this.nanos <= 3", "", "", ""},
		{"conjunction", money, "this.amount_minor >= 1 && true", "", "", ""},
		{"literal first", money, "1 <= this.amount_minor", "", "", ""},
		{"not equal", money, "this.amount_minor != 3", "", "", ""},
		{"double literal", money, "this.amount_minor >= 1.5", "", "", ""},
		{"uint literal", money, "this.amount_minor >= 1u", "", "", ""},
		{"hex literal", money, "this.amount_minor >= 0x10", "", "", ""},
		{"leading zero", money, "this.amount_minor >= 01", "", "", ""},
		{"string field", money, "this.currency == 1", "", "", ""},
		{"unknown field", money, "this.missing >= 1", "", "", ""},
		{"nested", money, "this.amount_minor.x >= 1", "", "", ""},
		{"function", money, "size(this.amount_minor) >= 1", "", "", ""},
		{"mask size", mask, "this.paths.size() <= 16", "", "", ""},
		{"mask path lengths", mask, "this.paths.all(p, p.size() <= 64)", "", "", ""},
		{"unique", money, "this.map(l, l.sku).unique()", "", "", ""},
		{"no message", nil, "this.amount_minor >= 1", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := recognize(tt.md, tt.expr)
			if tt.sub == "" {
				if ok {
					t.Fatalf("recognize(%q) = %s in %v..%v, want not recognized", tt.expr, b.sub.Name(), b.lo, b.hi)
				}
				return
			}
			if !ok {
				t.Fatalf("recognize(%q) not recognized, want %s in %s..%s", tt.expr, tt.sub, tt.lo, tt.hi)
			}
			if got := string(b.sub.Name()); got != tt.sub || b.lo.String() != tt.lo || b.hi.String() != tt.hi {
				t.Errorf("recognize(%q) = %s in %v..%v, want %s in %s..%s", tt.expr, got, b.lo, b.hi, tt.sub, tt.lo, tt.hi)
			}
		})
	}
}

// TestCELBoundApply: an inline sub-property is narrowed in place (a
// pattern beside the one it has, a tighter minimum/maximum), a $ref
// wrapper gets an object schema in allOf, and a bound that refuses zero
// makes the sub-field required.
func TestCELBoundApply(t *testing.T) {
	money := (&typev1.Money{}).ProtoReflect().Descriptor()
	dur := (&durationpb.Duration{}).ProtoReflect().Descriptor()
	bound := func(md protoreflect.MessageDescriptor, expr string) celBound {
		b, ok := recognize(md, expr)
		if !ok {
			t.Fatalf("recognize(%q): not recognized", expr)
		}
		return b
	}
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		b    celBound
		s    *openapi3.Schema
		want string
	}{
		{"inline int64, zero refused", bound(money, "this.amount_minor >= 1"),
			&openapi3.Schema{Properties: openapi3.Schemas{"amountMinor": openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, Pattern: "^[0-9]*$"})}},
			`{"required":["amountMinor"],"properties":{"amountMinor":{"type":"string","pattern":"^[0-9]*$","allOf":[{"pattern":"` +
				decimalRange(big.NewInt(1), big.NewInt(1e15)) + `"}]}}}`},
		{"inline int32, zero allowed", bound(dur, "this.nanos <= 10"),
			&openapi3.Schema{Properties: openapi3.Schemas{"nanos": openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"integer"}, Min: f(-5), Max: f(100)})}},
			`{"properties":{"nanos":{"type":"integer","minimum":-5,"maximum":10}}}`},
		{"wrapper", bound(dur, "this.nanos > 0"),
			&openapi3.Schema{},
			`{"allOf":[{"type":"object","required":["nanos"],"properties":{"nanos":{"type":"integer","minimum":1,"maximum":` +
				big.NewInt(math.MaxInt32).String() + `}}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.b.apply(tt.s)
			got, err := json.Marshal(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			_ = json.Unmarshal(got, &g)
			if err := json.Unmarshal([]byte(tt.want), &w); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("apply (-want +got):\n%s", diff)
			}
		})
	}
}
