package rules_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/portico-gateway/portico/gateway/apidoc/rules"
	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gen/openapi"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/protocheck"
)

// bodies is how many bodies TestSchemaAgreesWithRules generates per message
// (a quarter under -short: with a tenth, too few CreateOrderRequest bodies
// were valid for the test's own floor).
const bodies = 600

// TestSchemaAgreesWithRules: for every request body a client sends, bodies
// generated from its schema in the published document (gen/openapi, as
// GET /openapi.json serves it) are accepted by the schema exactly when the
// edge's decoder (jsonwire, which refuses what the document does not
// describe) and the services' rules (internal/protocheck) accept them. The
// bodies are valid ones and ones pushed just past a bound: a length at
// max+1, a count at min-1, a character outside a pattern, a number past a
// range, a required member left out, an unknown member, a member under its
// proto name, a null, an integer in the other JSON type. A CEL bound on a
// sub-field (a Money's amount_minor) is checked in the allOf wrapper
// Message builds, and bodies past each such bound are refused by both. A
// body the schema accepts that only a schema-blind CEL rule refuses
// (TestSchemaBlindCEL names them) is counted, not failed.
func TestSchemaAgreesWithRules(t *testing.T) {
	n := bodies
	if testing.Short() {
		n /= 4
	}
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON)
	if err != nil {
		t.Fatal(err)
	}
	decode := func(m proto.Message) func(body []byte) (proto.Message, error) {
		return func(b []byte) (proto.Message, error) { return m, jsonwire.Unmarshal(b, m) }
	}
	tests := []struct {
		name, path string
		md         protoreflect.MessageDescriptor
		// check decodes a body as the edge does and returns its RPC's request.
		check func(body []byte) (proto.Message, error)
	}{
		{"CreateOrderRequest", "/api/orders", (&orderv1.CreateOrderRequest{}).ProtoReflect().Descriptor(), func(b []byte) (proto.Message, error) {
			return decode(&orderv1.CreateOrderRequest{})(b)
		}},
		{"CreateItemRequest.item", "/api/inventory", (&inventoryv1.Item{}).ProtoReflect().Descriptor(), func(b []byte) (proto.Message, error) {
			it := &inventoryv1.Item{}
			return &inventoryv1.CreateItemRequest{Item: it}, jsonwire.Unmarshal(b, it)
		}},
		{"ReserveStockRequest", "/api/reservations", (&inventoryv1.ReserveStockRequest{}).ProtoReflect().Descriptor(), func(b []byte) (proto.Message, error) {
			return decode(&inventoryv1.ReserveStockRequest{})(b)
		}},
		{"CreatePaymentRequest", "/api/payments", (&paymentv1.CreatePaymentRequest{}).ProtoReflect().Descriptor(), func(b []byte) (proto.Message, error) {
			return decode(&paymentv1.CreatePaymentRequest{})(b)
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := doc.Paths.Value(tt.path).Post.RequestBody.Value.Content["application/json"].Schema.Value
			if err := s.Validate(context.Background()); err != nil {
				t.Fatalf("schema of %s is not a valid OpenAPI 3.0 schema: %v", tt.name, err)
			}
			cel := celRules(tt.md, 0)
			blind := map[string]bool{}
			for id, mapped := range cel {
				if !mapped {
					blind[id] = true
				}
			}
			g := &gen{rng: rand.New(rand.NewPCG(uint64(i), 8))}
			var accepted, rejected, celOnly, failures int
			probed := map[string]int{} // mapped CEL rule id -> bodies both refuse for it
			for range n {
				g.bad = []float64{0, 0, 0.02, 0.1, 0.3}[g.rng.IntN(5)]
				body, _ := json.Marshal(g.value(s))
				var doc any
				if err := json.Unmarshal(body, &doc); err != nil {
					t.Fatal(err)
				}
				schemaErr := s.VisitJSON(doc, openapi3.VisitAsRequest())
				msg, decodeErr := tt.check(body)
				rulesErr := decodeErr
				if rulesErr == nil {
					rulesErr = protocheck.Request(msg)
				}
				switch {
				case schemaErr == nil && rulesErr == nil:
					accepted++
				case schemaErr != nil && rulesErr != nil:
					rejected++
					if decodeErr == nil {
						for _, id := range ruleIDs(msg) {
							if cel[id] {
								probed[id]++
							}
						}
					}
				case schemaErr == nil && decodeErr == nil && onlyCEL(msg, blind):
					celOnly++
				default:
					failures++
					if failures <= 5 {
						t.Errorf("body %s:\nschema says %v\nrules say %v", clip(body), schemaErr, rulesErr)
					}
				}
			}
			t.Logf("%s: %d bodies, %d accepted by both, %d refused by both (for a mapped CEL rule: %v), %d refused only by a schema-blind CEL rule %v",
				tt.name, n, accepted, rejected, probed, celOnly, slices.Sorted(mapKeys(blind)))
			for id, mapped := range cel {
				if mapped && probed[id] == 0 {
					t.Errorf("no body broke the mapped CEL rule %s: the generator does not probe its bound", id)
				}
			}
			if accepted < n/10 || rejected < n/10 {
				t.Errorf("accepted %d, rejected %d of %d: the generator should produce at least a tenth of each", accepted, rejected, n)
			}
		})
	}
}

// TestSchemaBlindCEL: of the CEL rules in Portico's protos, Field maps the
// sub-field bounds to the schema, Mask maps an update mask's path count
// and path lengths into the updateMask parameter's pattern (a list of the
// settable names; services/inventory TestMaskSchemaAgreesWithService
// checks it), and only the rule JSON Schema 3.0 cannot say stays
// schema-blind: each SKU once in lines (uniqueness by a member, stated as
// x-portico-unique-by and in words).
func TestSchemaBlindCEL(t *testing.T) {
	got := map[string]bool{}
	protoregistry.GlobalFiles.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(string(f.Package()), "portico.") {
			for i := range f.Messages().Len() {
				maps.Copy(got, celRules(f.Messages().Get(i), 0))
			}
		}
		return true
	})
	want := map[string]bool{
		"amount.positive":          true,
		"unit_price.max":           true,
		"lines.unique_sku":         false,
		"update_mask.max_paths":    true,
		"update_mask.path_max_len": true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CEL rule ids -> mapped to the schema (-want +got):\n%s", diff)
	}
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/orders", "/api/reservations"} {
		lines := doc.Paths.Value(path).Post.RequestBody.Value.Content["application/json"].Schema.Value.Properties["lines"].Value
		if got := lines.Extensions[rules.UniqueByExtension]; got != "sku" {
			t.Errorf("POST %s: lines %s = %v, want sku", path, rules.UniqueByExtension, got)
		}
	}
	for _, p := range doc.Paths.Value("/api/inventory/{sku}").Patch.Parameters {
		if p.Value.Name == "updateMask" && p.Value.Schema.Value.Pattern == "" {
			t.Errorf("PATCH /api/inventory/{sku}: updateMask has no pattern; its rules are mapped")
		}
	}
}

// celRules returns the ids of the CEL rules on md and the messages under
// it, each with whether Field maps it to the schema (false: schema-blind).
func celRules(md protoreflect.MessageDescriptor, depth int) map[string]bool {
	ids := map[string]bool{}
	if depth > 4 {
		return ids
	}
	if r, ok := proto.GetExtension(md.Options(), validate.E_Message).(*validate.MessageRules); ok {
		for _, c := range r.GetCel() {
			ids[c.GetId()] = false
		}
	}
	for i := range md.Fields().Len() {
		fd := md.Fields().Get(i)
		if r, ok := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules); ok {
			for _, c := range r.GetCel() {
				single := fd.Message() != nil && !fd.IsList() && !fd.IsMap()
				ids[c.GetId()] = single && rules.Maps(fd.Message(), c.GetExpression()) ||
					single && fd.Message().FullName() == "google.protobuf.FieldMask" && rules.MapsMask(c.GetExpression())
			}
		}
		if fd.Message() != nil {
			for id := range celRules(fd.Message(), depth+1) {
				ids[id] = true
			}
		}
	}
	return ids
}

// ruleIDs are the ids of the rules msg breaks.
func ruleIDs(msg proto.Message) []string {
	var ve *protovalidate.ValidationError
	if !errors.As(protovalidate.Validate(msg), &ve) {
		return nil
	}
	ids := make([]string, len(ve.Violations))
	for i, v := range ve.Violations {
		ids[i] = v.Proto.GetRuleId()
	}
	return ids
}

// onlyCEL reports whether every rule msg breaks is a CEL rule of cel.
func onlyCEL(msg proto.Message, cel map[string]bool) bool {
	var ve *protovalidate.ValidationError
	if !errors.As(protovalidate.Validate(msg), &ve) {
		return false
	}
	for _, v := range ve.Violations {
		if !cel[v.Proto.GetRuleId()] {
			return false
		}
	}
	return true
}

// gen writes JSON values for a schema. Each choice is valid, or with
// probability bad, just outside the schema: one past a length, count or
// range bound, a character outside the pattern, a required member missing.
type gen struct {
	rng *rand.Rand
	bad float64
}

func (g *gen) wrong() bool { return g.rng.Float64() < g.bad }

func (g *gen) value(s *openapi3.Schema) any {
	switch {
	case s.Type == nil && len(s.AllOf) > 0:
		return g.allOf(s.AllOf)
	case s.Type.Is(openapi3.TypeObject):
		return g.object(s)
	case s.Type.Is(openapi3.TypeArray):
		n := g.size(int(s.MinItems), s.MaxItems, 4, 51)
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(s.Items.Value)
		}
		return out
	case s.Type.Is(openapi3.TypeInteger):
		return g.integer(s)
	case s.Type.Is(openapi3.TypeBoolean):
		return g.rng.IntN(2) == 0
	case s.Format == "int64":
		return g.int64(s)
	case s.Format == "date-time":
		return "2026-11-30T12:00:00Z"
	}
	return g.string(s)
}

// allOf writes a value of the first schema (a $ref's target) and, half
// the time each, members of the other (object) schemas from their own
// property schemas: a wrapper's bound is probed from both sides.
func (g *gen) allOf(all openapi3.SchemaRefs) any {
	v := g.value(all[0].Value)
	out, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for _, o := range all[1:] {
		for _, name := range slices.Sorted(mapKeys(o.Value.Properties)) {
			if g.rng.IntN(2) == 0 {
				out[name] = g.value(o.Value.Properties[name].Value)
			}
		}
	}
	return out
}

func (g *gen) object(s *openapi3.Schema) map[string]any {
	out := map[string]any{}
	for _, name := range slices.Sorted(mapKeys(s.Properties)) {
		p := s.Properties[name].Value
		if p.ReadOnly {
			continue
		}
		if slices.Contains(s.Required, name) && !g.wrong() || g.rng.IntN(3) > 0 {
			key, v := name, g.value(p)
			if g.wrong() && g.rng.IntN(4) == 0 {
				key, v = g.misspell(name, v)
			}
			out[key] = v
		}
	}
	if g.wrong() && g.rng.IntN(8) == 0 {
		out["colour"] = "red" // a member no schema has
	}
	return out
}

// misspell writes a member the way protojson's parser would take it but
// the document does not: under its proto name, as null, or an integer in
// the other JSON type (a 64-bit one as a number, a 32-bit one as a
// string). It leaves a member it cannot misspell alone.
func (g *gen) misspell(name string, v any) (string, any) {
	switch x := v.(type) {
	case int64:
		if g.rng.IntN(2) == 0 {
			return name, strconv.FormatInt(x, 10)
		}
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil && g.rng.IntN(2) == 0 {
			return name, n
		}
	}
	if snake := rules.ProtoName(name); snake != name && g.rng.IntN(2) == 0 {
		return snake, v
	}
	return name, nil
}

// interesting are lengths, counts and numbers where bounds usually sit.
// The generator tries them whatever the schema says, so a bound the schema
// forgot is probed too.
var interesting = []int{0, 1, 2, 3, 4, 49, 50, 51, 63, 64, 65, 199, 200, 201, 999, 1000, 1001, 1024, 1025}

// size picks a length or count: a bound, next to one, or any in between;
// one past a bound when wrong; sometimes an interesting one up to limit.
// soft caps an unbounded maximum.
func (g *gen) size(lo int, maxp *uint64, soft, limit int) int {
	if g.rng.IntN(8) == 0 {
		if v := interesting[g.rng.IntN(len(interesting))]; v <= limit {
			return v
		}
	}
	hi := soft
	if maxp != nil {
		hi = int(*maxp)
	}
	if g.wrong() {
		if lo > 0 && g.rng.IntN(2) == 0 {
			return lo - 1
		}
		return hi + 1
	}
	// Values between the bounds are drawn near the lower one: they are all
	// alike to a rule, and short values keep the test fast.
	c := []int{lo, hi, lo + 1, hi - 1, lo + g.rng.IntN(min(hi-lo, 8)+1)}
	return min(max(c[g.rng.IntN(len(c))], lo), hi)
}

func (g *gen) integer(s *openapi3.Schema) any {
	lo, hi := float64(math.MinInt32), float64(math.MaxInt32)
	if s.Min != nil {
		lo = *s.Min
	}
	if s.Max != nil {
		hi = *s.Max
	}
	var v float64
	switch {
	case g.rng.IntN(8) == 0:
		v = float64(interesting[g.rng.IntN(len(interesting))] * (1 - 2*g.rng.IntN(2)))
	case g.wrong():
		v = []float64{lo - 1, hi + 1}[g.rng.IntN(2)]
	default:
		v = []float64{lo, hi, lo + 1, hi - 1, lo + math.Floor(g.rng.Float64()*(hi-lo))}[g.rng.IntN(5)]
	}
	return int64(min(max(v, math.MinInt32), math.MaxInt32))
}

// int64 writes a 64-bit integer as protojson does, a decimal string: from
// the schema's pattern, or one of the values around powers of ten (where
// Portico's bounds sit), in or out of range.
func (g *gen) int64(s *openapi3.Schema) any {
	var patterns []string
	if s.Pattern != "" {
		patterns = append(patterns, s.Pattern)
	}
	for _, a := range s.AllOf {
		if a.Value != nil && a.Value.Pattern != "" {
			patterns = append(patterns, a.Value.Pattern)
		}
	}
	if len(patterns) > 0 && !g.wrong() && g.rng.IntN(2) == 0 {
		if v, ok := (regexGen{rng: g.rng, min: 1, max: 19}).gen(patterns[g.rng.IntN(len(patterns))]); ok {
			return v
		}
	}
	p := int64(1)
	for range g.rng.IntN(19) {
		p *= 10
	}
	return strconv.FormatInt(p+int64(g.rng.IntN(3))-1, 10)
}

// outside are characters that break Portico's patterns or count as one
// character but several bytes.
var outside = []string{"!", " ", "é", "日", "A", "a", "_", "-", "0", "/"}

func (g *gen) string(s *openapi3.Schema) any {
	if len(s.Enum) > 0 {
		if g.wrong() {
			return "NOT_A_VALUE"
		}
		return s.Enum[g.rng.IntN(len(s.Enum))]
	}
	n := g.size(int(s.MinLength), s.MaxLength, 12, 1025)
	var v string
	if s.Pattern != "" {
		v, _ = (regexGen{rng: g.rng, min: n, max: n}).gen(s.Pattern)
	} else {
		var b strings.Builder
		for range n {
			b.WriteString([]string{"a", "z", "Q", "é", "日", "_", "9"}[g.rng.IntN(7)])
		}
		v = b.String()
	}
	if g.wrong() {
		r := []rune(v)
		i := g.rng.IntN(len(r) + 1)
		v = string(r[:i]) + outside[g.rng.IntN(len(outside))] + string(r[i:])
	}
	return v
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}
