package jsonwire

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// FieldPath translates a field path in proto names, as in
// google.rpc.BadRequest ("lines[0].unit_price.amount_minor"), into md's JSON
// names ("lines[0].unitPrice.amountMinor") and a JSON Pointer fragment.
// Names md does not know are converted to lowerCamel the way protoc derives
// json_name.
func FieldPath(md protoreflect.MessageDescriptor, protoPath string) (field, pointer string) {
	var path []pathElem
	for _, seg := range strings.Split(protoPath, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		var fd protoreflect.FieldDescriptor
		if md != nil {
			fd = md.Fields().ByTextName(name)
		}
		if fd != nil {
			path = append(path, pathElem{name: fd.JSONName(), kind: 'f'})
			md = fd.Message()
			if fd.IsMap() {
				md = fd.MapValue().Message()
			}
		} else {
			path = append(path, pathElem{name: lowerCamel(name), kind: 'f'})
			md = nil
		}
		path = append(path, subscripts(rest)...)
	}
	return render(path)
}

// subscripts parses the "0]" or "\"key\"]" parts after a field name.
func subscripts(s string) []pathElem {
	var out []pathElem
	for _, part := range strings.Split(s, "[") {
		part = strings.TrimSuffix(part, "]")
		if part == "" {
			continue
		}
		if i, err := strconv.Atoi(part); err == nil {
			out = append(out, pathElem{index: i, kind: 'i'})
			continue
		}
		if k, err := strconv.Unquote(part); err == nil {
			part = k
		}
		out = append(out, pathElem{name: part, kind: 'k'})
	}
	return out
}

// lowerCamel is protoc's json_name rule: drop each "_" and upper-case the
// letter after it.
func lowerCamel(s string) string {
	var b strings.Builder
	up := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_':
			up = true
		case up && c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			up = false
		default:
			b.WriteByte(c)
			up = false
		}
	}
	return b.String()
}
