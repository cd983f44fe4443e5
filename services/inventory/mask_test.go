package inventory

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
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
	var accepted, rejected, failures int
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
			if failures++; failures > 5 {
				continue
			}
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

// TestUpdateBodySchemaAgreesWithService: a PATCH /api/inventory/{sku}
// body sent without updateMask, as the published ItemUpdate schema
// states it, is accepted exactly when the edge (jsonwire.Unmarshal, then
// the mask grpc-gateway derives from the body's leaves) and this service
// (validateUpdate) accept it: at least one member, an object member
// (unitPrice) whole, every member within its rules. Bodies combine each
// member's valid values and values just past a rule, output-only and
// unknown members now and then.
func TestUpdateBodySchemaAgreesWithService(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON)
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Paths.Value("/api/inventory/{sku}").Patch.RequestBody.Value.Content["application/json"].Schema.Value
	values := map[string][]any{
		"name":      {"x", "Desk Pad", "", strings.Repeat("n", 200), strings.Repeat("n", 201)},
		"unitPrice": {map[string]any{"amountMinor": "100", "currency": "USD"}, map[string]any{"currency": "USD"}, map[string]any{"amountMinor": "100"}, map[string]any{}, map[string]any{"amountMinor": "1000000000001", "currency": "USD"}, map[string]any{"amountMinor": "0", "currency": "usd"}},
		"available": {"5", "0", "1000000000", "1000000001", "-1", 5},
		"reserved":  {"1"},
		"colour":    {"red"},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var accepted, rejected, failures int
	for range 1000 {
		body := map[string]any{}
		for _, k := range []string{"name", "unitPrice", "available", "reserved", "colour"} {
			p := 2
			if k == "reserved" || k == "colour" {
				p = 15
			}
			if rng.IntN(p) == 0 {
				body[k] = values[k][rng.IntN(len(values[k]))]
			}
		}
		raw, _ := json.Marshal(body)
		schemaErr := s.VisitJSON(body, openapi3.VisitAsRequest())
		item := &inventoryv1.Item{}
		refused := jsonwire.Unmarshal(raw, item)
		if refused == nil {
			mask, err := runtime.FieldMaskFromRequestBody(bytes.NewReader(raw), item)
			if err != nil {
				t.Fatalf("FieldMaskFromRequestBody(%s): %v", raw, err)
			}
			item.Sku = "a" // from the path
			_, refused = validateUpdate(&inventoryv1.UpdateItemRequest{Item: item, UpdateMask: mask})
		}
		switch {
		case schemaErr == nil && refused == nil:
			accepted++
		case schemaErr != nil && refused != nil:
			rejected++
		default:
			if failures++; failures > 5 {
				continue
			}
			t.Errorf("PATCH %s: schema says %v; edge and service say %v", raw, schemaErr, refused)
		}
	}
	t.Logf("%d bodies accepted by both, %d refused by both", accepted, rejected)
	if accepted < 100 || rejected < 100 {
		t.Errorf("accepted %d, rejected %d of 1000: the generator should produce at least a tenth of each", accepted, rejected)
	}
}
