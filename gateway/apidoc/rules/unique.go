package rules

import (
	"regexp"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// UniqueByExtension names the member by which the items of a list are
// unique: JSON Schema 3.0's uniqueItems compares whole items and cannot
// say "each sku once", so the rule travels as this vendor extension (and
// in words in the description).
const UniqueByExtension = "x-portico-unique-by"

// celUniqueBy matches "this.map(l, l.<member>).unique()".
var celUniqueBy = regexp.MustCompile(`^\s*this\.map\(([a-z_][a-z0-9_]*)\s*,\s*([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\)\.unique\(\)\s*$`)

// uniqueBy returns the lowerCamel name of the member expr, a CEL rule on
// the repeated message field fd, says is unique across its items.
func uniqueBy(fd protoreflect.FieldDescriptor, expr string) (string, bool) {
	if !fd.IsList() || fd.Message() == nil {
		return "", false
	}
	m := celUniqueBy.FindStringSubmatch(expr)
	if m == nil || m[1] != m[2] {
		return "", false
	}
	sub := fd.Message().Fields().ByName(protoreflect.Name(m[3]))
	if sub == nil || sub.IsList() || sub.IsMap() || sub.Message() != nil {
		return "", false
	}
	return sub.JSONName(), true
}
