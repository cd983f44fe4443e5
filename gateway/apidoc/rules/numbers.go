package rules

import (
	"math"
	"math/big"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// number is one bound or listed value of a numeric rule: exact for
// integer kinds, a float for float and double.
type number struct {
	i *big.Int // nil for a float
	f float64
}

// numeric holds a numeric rule message's bounds and lists. The twelve
// numeric rule messages (Int32Rules ... DoubleRules) share field names,
// so they are read by reflection rather than twelve times by type.
type numeric struct {
	lo, hi         *number
	loExcl, hiExcl bool
	in, notIn      []number
	konst          *number
}

// numberRules maps the numeric rules of r to s. A 64-bit integer written
// as a JSON string (protojson's form, a string schema) gets a pattern of
// its decimal range instead of minimum and maximum, which a string does
// not obey.
func numberRules(fd protoreflect.FieldDescriptor, r *validate.FieldRules, s *openapi3.Schema) {
	n, ok := readNumeric(r)
	if !ok {
		return
	}
	asString := s.Type != nil && s.Type.Is(openapi3.TypeString)
	if n.konst != nil {
		n.in = []number{*n.konst}
	}
	if len(n.in) > 0 {
		s.Enum = values(n.in, asString)
	}
	if len(n.notIn) > 0 {
		s.Not = openapi3.NewSchemaRef("", &openapi3.Schema{Enum: values(n.notIn, asString)})
	}
	if asString {
		if lo, hi, ok := intRange(fd.Kind(), n); ok {
			addPattern(s, decimalRange(lo, hi))
		}
		return
	}
	if n.lo != nil {
		s.Min = ptr(n.lo.float())
		if n.loExcl {
			s.ExclusiveMin = openapi3.ExclusiveBound{Bool: ptr(true)}
		}
	}
	if n.hi != nil {
		s.Max = ptr(n.hi.float())
		if n.hiExcl {
			s.ExclusiveMax = openapi3.ExclusiveBound{Bool: ptr(true)}
		}
	}
}

func readNumeric(r *validate.FieldRules) (numeric, bool) {
	var n numeric
	m := r.ProtoReflect()
	od := m.Descriptor().Oneofs().ByName("type")
	fd := m.WhichOneof(od)
	if fd == nil || fd.Message() == nil {
		return n, false
	}
	rm := m.Get(fd).Message()
	get := func(name protoreflect.Name) *number {
		f := rm.Descriptor().Fields().ByName(name)
		if f == nil || !rm.Has(f) {
			return nil
		}
		v := toNumber(rm.Get(f))
		return &v
	}
	list := func(name protoreflect.Name) []number {
		f := rm.Descriptor().Fields().ByName(name)
		if f == nil || !f.IsList() {
			return nil
		}
		l := rm.Get(f).List()
		out := make([]number, l.Len())
		for i := range l.Len() {
			out[i] = toNumber(l.Get(i))
		}
		return out
	}
	if rm.Descriptor().Fields().ByName("gte") == nil {
		return n, false // not a numeric rule message
	}
	n.lo, n.hi = get("gte"), get("lte")
	if gt := get("gt"); gt != nil {
		n.lo, n.loExcl = gt, true
	}
	if lt := get("lt"); lt != nil {
		n.hi, n.hiExcl = lt, true
	}
	n.konst, n.in, n.notIn = get("const"), list("in"), list("not_in")
	return n, true
}

func toNumber(v protoreflect.Value) number {
	switch x := v.Interface().(type) {
	case int32:
		return number{i: big.NewInt(int64(x))}
	case int64:
		return number{i: big.NewInt(x)}
	case uint32:
		return number{i: new(big.Int).SetUint64(uint64(x))}
	case uint64:
		return number{i: new(big.Int).SetUint64(x)}
	case float32:
		return number{f: float64(x)}
	case float64:
		return number{f: x}
	}
	return number{}
}

func (n number) float() float64 {
	if n.i != nil {
		f, _ := new(big.Float).SetInt(n.i).Float64()
		return f
	}
	return n.f
}

// values are n as enum members: decimal strings for a string schema,
// float64 (what a decoded JSON number is) otherwise.
func values(ns []number, asString bool) []any {
	out := make([]any, len(ns))
	for i, n := range ns {
		switch {
		case asString && n.i != nil:
			out[i] = n.i.String()
		default:
			out[i] = n.float()
		}
	}
	return out
}

// intRange is the inclusive integer range n allows for a field of kind k,
// with the kind's own limits where n sets none.
func intRange(k protoreflect.Kind, n numeric) (lo, hi *big.Int, ok bool) {
	switch k {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		lo, hi = big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		lo, hi = new(big.Int), new(big.Int).SetUint64(math.MaxUint64)
	default:
		return nil, nil, false
	}
	if n.lo == nil && n.hi == nil {
		return nil, nil, false // no range rule: the type's own limits are not a rule
	}
	one := big.NewInt(1)
	if n.lo != nil && n.lo.i != nil {
		lo = new(big.Int).Set(n.lo.i)
		if n.loExcl {
			lo.Add(lo, one)
		}
	}
	if n.hi != nil && n.hi.i != nil {
		hi = new(big.Int).Set(n.hi.i)
		if n.hiExcl {
			hi.Sub(hi, one)
		}
	}
	return lo, hi, true
}
