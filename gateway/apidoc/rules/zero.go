package rules

import (
	"math/big"
	"regexp"
	"slices"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// refusesZero reports whether r's mappable rules refuse fd's zero value
// ("", 0, the first enum value, an empty list or map).
func refusesZero(fd protoreflect.FieldDescriptor, r *validate.FieldRules) bool {
	switch {
	case fd.IsList():
		return r.GetRepeated().GetMinItems() > 0
	case fd.IsMap():
		return r.GetMap().GetMinPairs() > 0
	case r.GetString() != nil:
		return stringRefusesEmpty(r.GetString())
	case r.GetEnum() != nil:
		e := r.GetEnum()
		return e.HasConst() && e.GetConst() != 0 ||
			len(e.GetIn()) > 0 && !slices.Contains(e.GetIn(), 0) ||
			slices.Contains(e.GetNotIn(), 0)
	case r.GetBool() != nil:
		return r.GetBool().GetConst()
	}
	n, ok := readNumeric(r)
	if !ok {
		return false
	}
	if n.konst != nil {
		n.in = []number{*n.konst}
	}
	zero := number{i: new(big.Int)}
	isZero := func(x number) bool { return x.cmp(zero) == 0 }
	switch {
	case len(n.in) > 0 && !slices.ContainsFunc(n.in, isZero):
		return true
	case slices.ContainsFunc(n.notIn, isZero):
		return true
	case n.lo != nil && (n.lo.cmp(zero) > 0 || n.loExcl && n.lo.cmp(zero) == 0):
		return true
	case n.hi != nil && (n.hi.cmp(zero) < 0 || n.hiExcl && n.hi.cmp(zero) == 0):
		return true
	}
	return false
}

func stringRefusesEmpty(s *validate.StringRules) bool {
	if s.GetMinLen() > 0 || s.GetLen() > 0 || s.HasConst() && s.GetConst() != "" ||
		len(s.GetIn()) > 0 && !slices.Contains(s.GetIn(), "") || slices.Contains(s.GetNotIn(), "") ||
		s.GetPrefix() != "" || s.GetSuffix() != "" || s.GetContains() != "" {
		return true
	}
	if s.HasPattern() {
		re, err := regexp.Compile(s.GetPattern())
		return err == nil && !re.MatchString("")
	}
	return false
}

// cmp compares two numbers of one rule (both integers or both floats).
func (n number) cmp(o number) int {
	if n.i != nil && o.i != nil {
		return n.i.Cmp(o.i)
	}
	a, b := n.float(), o.float()
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
