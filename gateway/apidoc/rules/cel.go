package rules

import (
	"math"
	"math/big"
	"regexp"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// celCompare matches the one CEL form with an exact JSON Schema meaning:
// a sub-field of a message field compared with an integer literal.
var celCompare = regexp.MustCompile(`^\s*this\.([a-z_][a-z0-9_]*)\s*(<=|>=|==|<|>)\s*(-?(?:0|[1-9][0-9]*))\s*$`)

// celBound is a recognized CEL rule: sub, a singular integer field of the
// rule's message, lies in lo..hi (inclusive; within the range of sub's
// kind and of sub's own range rule).
type celBound struct {
	sub    protoreflect.FieldDescriptor
	lo, hi *big.Int
}

// recognize reads expr, a CEL rule on a field of message type md, as a
// bound on one of md's integer fields; ok is false for any other
// expression, which then has no JSON Schema form here.
func recognize(md protoreflect.MessageDescriptor, expr string) (b celBound, ok bool) {
	m := celCompare.FindStringSubmatch(expr)
	if m == nil || md == nil {
		return b, false
	}
	sub := md.Fields().ByName(protoreflect.Name(m[1]))
	if sub == nil || sub.IsList() || sub.IsMap() || sub.ContainingOneof() != nil || sub.HasDefault() {
		return b, false
	}
	b.sub = sub
	b.lo, b.hi, ok = kindRange(sub.Kind())
	if !ok {
		return b, false
	}
	v, _ := new(big.Int).SetString(m[3], 10)
	one := big.NewInt(1)
	switch m[2] {
	case "<":
		b.hi = v.Sub(v, one)
	case "<=":
		b.hi = v
	case ">":
		b.lo = v.Add(v, one)
	case ">=":
		b.lo = v
	case "==":
		b.lo, b.hi = v, new(big.Int).Set(v)
	}
	// Within the sub-field's own range rule, which its schema carries
	// already: the intersection is the same, and its pattern far shorter.
	if r := fieldRules(sub); r != nil {
		if n, ok := readNumeric(r); ok {
			if lo, hi, ok := intRange(sub.Kind(), n); ok {
				b.lo, b.hi = bigMax(b.lo, lo), bigMin(b.hi, hi)
			}
		}
	}
	return b, true
}

func bigMax(a, b *big.Int) *big.Int {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

func bigMin(a, b *big.Int) *big.Int {
	if a.Cmp(b) <= 0 {
		return a
	}
	return b
}

// kindRange is the range of an integer kind; ok is false for other kinds.
func kindRange(k protoreflect.Kind) (lo, hi *big.Int, ok bool) {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32), true
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return new(big.Int), big.NewInt(math.MaxUint32), true
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64), true
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return new(big.Int), new(big.Int).SetUint64(math.MaxUint64), true
	}
	return nil, nil, false
}

// apply puts b on s, the schema of the message field the rule is on: on
// its inline property of b.sub, or (s wraps a $ref) on an object schema
// in s.AllOf. A bound that refuses zero also makes the sub-field
// required: protojson reads an absent field as zero.
func (b celBound) apply(s *openapi3.Schema) {
	name := b.sub.JSONName()
	bound := b.schema()
	zero := new(big.Int)
	need := b.lo.Cmp(zero) > 0 || b.hi.Cmp(zero) < 0
	if p := s.Properties[name]; p != nil && p.Ref == "" && p.Value != nil {
		b.narrow(p.Value)
		if need && !slices.Contains(s.Required, name) {
			s.Required = append(s.Required, name)
		}
		return
	}
	o := &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeObject}, Properties: openapi3.Schemas{name: openapi3.NewSchemaRef("", bound)}}
	if need {
		o.Required = []string{name}
	}
	s.AllOf = append(s.AllOf, openapi3.NewSchemaRef("", o))
}

// asString reports whether protojson writes b.sub as a JSON string.
func (b celBound) asString() bool {
	switch b.sub.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return false
	}
	return true
}

// schema is b's own schema of b.sub's value.
func (b celBound) schema() *openapi3.Schema {
	if b.asString() {
		return &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, Pattern: decimalRange(b.lo, b.hi)}
	}
	lo, _ := new(big.Float).SetInt(b.lo).Float64()
	hi, _ := new(big.Float).SetInt(b.hi).Float64()
	return &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeInteger}, Min: &lo, Max: &hi}
}

// narrow intersects an inline schema of b.sub with b.
func (b celBound) narrow(s *openapi3.Schema) {
	own := b.schema()
	if b.asString() {
		addPattern(s, own.Pattern)
		return
	}
	if s.Min == nil || *own.Min > *s.Min || *own.Min == *s.Min && s.ExclusiveMin.Bool == nil {
		s.Min, s.ExclusiveMin = own.Min, openapi3.ExclusiveBound{}
	}
	if s.Max == nil || *own.Max < *s.Max || *own.Max == *s.Max && s.ExclusiveMax.Bool == nil {
		s.Max, s.ExclusiveMax = own.Max, openapi3.ExclusiveBound{}
	}
}
