package rules

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/portico-gateway/portico/gateway/protoopt"
)

// maskCount and maskLen match the two CEL rules an update mask carries:
// at most N paths, each at most N characters.
var (
	maskCount = regexp.MustCompile(`^\s*this\.paths\.size\(\)\s*<=\s*([0-9]+)\s*$`)
	maskLen   = regexp.MustCompile(`^\s*this\.paths\.all\(([a-z_][a-z0-9_]*)\s*,\s*([a-z_][a-z0-9_]*)\.size\(\)\s*<=\s*([0-9]+)\)\s*$`)
)

// Settable returns the lowerCamel names of md's fields a client may name
// in an update mask: protoopt.Settable.
func Settable(md protoreflect.MessageDescriptor) []string { return protoopt.Settable(md) }

// Mask gives s, the schema of the query parameter of fd (a
// google.protobuf.FieldMask of an update of message target), the pattern
// of what the edge and the rules accept: empty (every settable field), or
// a comma-separated list of Settable(target)'s lowerCamel names (the
// FieldMask's JSON form; the edge refuses proto names and nested paths: a
// member is set whole), of at most as many paths as the
// "this.paths.size() <= N" rule allows. The "this.paths.all(p, p.size()
// <= N)" rule holds for every name that fits, and a name that does not
// is left out. ok is false, and s unchanged, when fd has a CEL rule of
// another form or no name fits.
func Mask(fd protoreflect.FieldDescriptor, target protoreflect.MessageDescriptor, s *openapi3.Schema) (ok bool) {
	if fd.Message() == nil || fd.Message().FullName() != "google.protobuf.FieldMask" || fd.IsList() {
		return false
	}
	names := Settable(target)
	count := -1 // unbounded
	for _, c := range fieldRules(fd).GetCel() {
		expr := c.GetExpression()
		if m := maskCount.FindStringSubmatch(expr); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil {
				return false
			}
			count = n
			continue
		}
		m := maskLen.FindStringSubmatch(expr)
		if m == nil || m[1] != m[2] {
			return false
		}
		n, err := strconv.Atoi(m[3])
		if err != nil {
			return false
		}
		names = slices.DeleteFunc(names, func(name string) bool { return len(protoName(name)) > n })
	}
	if len(names) == 0 {
		return false
	}
	s.Pattern = maskPattern(names, count)
	s.Format = ""
	return true
}

// maskPattern is ^((a|b)(,(a|b)){0,count-1})?$; count < 0 means any count.
func maskPattern(names []string, count int) string {
	alt := "(" + strings.Join(names, "|") + ")"
	switch {
	case count == 0:
		return "^$"
	case count < 0:
		return "^(" + alt + "(," + alt + ")*)?$"
	case count == 1:
		return "^" + alt + "?$"
	}
	return "^(" + alt + "(," + alt + "){0," + strconv.Itoa(count-1) + "})?$"
}

// protoName is the snake_case name of a lowerCamel JSON name (the rules
// measure the paths the service receives).
func protoName(json string) string {
	var b strings.Builder
	for _, r := range json {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
