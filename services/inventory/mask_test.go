package inventory

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gen/openapi"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// TestMaskSchemaAgreesWithService: the updateMask parameter of PATCH
// /api/inventory/{sku}, as the published document (gen/openapi) states it,
// accepts a value exactly when the edge (jsonwire.MaskPaths: the
// FieldMask's JSON form, lowerCamel top-level names) and this service
// (validateUpdate: the mask's CEL rules and the settable fields) accept
// it. Values are lists of the names the schema's pattern lists, of every
// length around the path count cap, with now and then a name that is not
// one (a proto name, a nested path, an output-only or immutable member,
// an unknown or empty or over-long one).
func TestMaskSchemaAgreesWithService(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON)
	if err != nil {
		t.Fatal(err)
	}
	var s *openapi3.Schema
	for _, p := range doc.Paths.Value("/api/inventory/{sku}").Patch.Parameters {
		if p.Value != nil && p.Value.Name == "updateMask" {
			s = p.Value.Schema.Value
		}
	}
	if s == nil || s.Pattern == "" {
		t.Fatal("PATCH /api/inventory/{sku} has no updateMask parameter with a pattern")
	}
	alt := regexp.MustCompile(`\(([A-Za-z0-9|]+)\)`).FindStringSubmatch(s.Pattern)
	if alt == nil {
		t.Fatalf("pattern %q lists no names", s.Pattern)
	}
	names := strings.Split(alt[1], "|")
	wrong := []string{"sku", "reserved", "sold", "updateTime", "unit_price", "update_time", "unitPrice.currency",
		"unitPrice.amountMinor", "unit_price.amount_minor", "", "Name", "colour", strings.Repeat("a", 65)}
	md := (&inventoryv1.Item{}).ProtoReflect().Descriptor()
	rng := rand.New(rand.NewPCG(1, 2))
	var accepted, rejected int
	for range 2000 {
		n := rng.IntN(19) // 0..18 paths, around the cap of 16
		parts := make([]string, n)
		for i := range parts {
			parts[i] = names[rng.IntN(len(names))]
			if rng.IntN(20) == 0 {
				parts[i] = wrong[rng.IntN(len(wrong))]
			}
		}
		v := strings.Join(parts, ",")
		schemaErr := s.VisitJSON(v)
		var serviceErr error
		paths, edgeErr := jsonwire.MaskPaths(md, v)
		if edgeErr == nil {
			_, serviceErr = validateUpdate(&inventoryv1.UpdateItemRequest{
				Item:       &inventoryv1.Item{Sku: "a", Name: "x", UnitPrice: &typev1.Money{AmountMinor: 1, Currency: "USD"}, Available: 1},
				UpdateMask: &fieldmaskpb.FieldMask{Paths: paths},
			})
		}
		switch refused := edgeErr != nil || serviceErr != nil; {
		case schemaErr == nil && !refused:
			accepted++
		case schemaErr != nil && refused:
			rejected++
		default:
			t.Errorf("updateMask=%q: schema says %v; edge says %v, service says %v", clip(v), schemaErr, edgeErr, serviceErr)
		}
	}
	t.Logf("%d masks accepted by both, %d refused by both", accepted, rejected)
	if accepted < 200 || rejected < 200 {
		t.Errorf("accepted %d, rejected %d of 2000: the generator should produce at least a tenth of each", accepted, rejected)
	}
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
