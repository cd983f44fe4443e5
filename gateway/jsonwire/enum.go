package jsonwire

import (
	"encoding/json"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// enum checks an enum value, which is one of the names EnumNames lists
// (short ones, as the document spells them), and re-emits it in full for
// protojson.
func (w *walker) enum(ed protoreflect.EnumDescriptor, tok json.Token) error {
	s, ok := tok.(string)
	if !ok {
		return w.errorf(false, "want one of %s", strings.Join(EnumNames(ed), ", "))
	}
	prefix, renamed := Prefix(ed)
	switch {
	case !renamed && ed.Values().ByName(protoreflect.Name(s)) != nil:
	case renamed && ed.Values().ByName(protoreflect.Name(prefix+s)) != nil:
		s = prefix + s
		w.changed = true
	default:
		return w.errorf(false, "want one of %s", strings.Join(EnumNames(ed), ", "))
	}
	w.out.str(s)
	return nil
}

var prefixes sync.Map // protoreflect.FullName -> string ("" when not renamed)

// Prefix returns the prefix stripped from ed's value names in JSON:
// UPPER_SNAKE(name)+"_" when every value starts with it and no stripped
// name would start with a digit; ok is false otherwise.
func Prefix(ed protoreflect.EnumDescriptor) (prefix string, ok bool) {
	if v, hit := prefixes.Load(ed.FullName()); hit {
		p := v.(string)
		return p, p != ""
	}
	p := upperSnake(string(ed.Name())) + "_"
	vals := ed.Values()
	for i := 0; i < vals.Len(); i++ {
		n := string(vals.Get(i).Name())
		if !strings.HasPrefix(n, p) || len(n) == len(p) || n[len(p)] >= '0' && n[len(p)] <= '9' {
			p = ""
			break
		}
	}
	prefixes.Store(ed.FullName(), p)
	return p, p != ""
}

// Short returns the JSON spelling of an enum value name.
func Short(ed protoreflect.EnumDescriptor, name string) string {
	if p, ok := Prefix(ed); ok {
		return strings.TrimPrefix(name, p)
	}
	return name
}

// EnumNames lists ed's values as they appear in JSON.
func EnumNames(ed protoreflect.EnumDescriptor) []string {
	vals := ed.Values()
	out := make([]string, 0, vals.Len())
	for i := 0; i < vals.Len(); i++ {
		out = append(out, Short(ed, string(vals.Get(i).Name())))
	}
	return out
}

// upperSnake turns "OrderStatus" into "ORDER_STATUS".
func upperSnake(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		isUpper := c >= 'A' && c <= 'Z'
		if isUpper && i > 0 && (isLowerOrDigit(s[i-1]) || i+1 < len(s) && s[i+1] >= 'a' && s[i+1] <= 'z' && s[i-1] >= 'A' && s[i-1] <= 'Z') {
			b.WriteByte('_')
		}
		b.WriteString(strings.ToUpper(string(c)))
	}
	return b.String()
}

func isLowerOrDigit(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// Unspecified reports whether the value named name (in full) is ed's zero
// value named *UNSPECIFIED (AIP-126): what an unset field reads as, never
// a value a request names.
func Unspecified(ed protoreflect.EnumDescriptor, name string) bool {
	v := ed.Values().ByName(protoreflect.Name(name))
	return v != nil && v.Number() == 0 && strings.HasSuffix(name, "UNSPECIFIED")
}

// RequestNames lists the values a request may name: EnumNames without the
// Unspecified zero value.
func RequestNames(ed protoreflect.EnumDescriptor) []string {
	var out []string
	vals := ed.Values()
	for i := 0; i < vals.Len(); i++ {
		if n := string(vals.Get(i).Name()); !Unspecified(ed, n) {
			out = append(out, Short(ed, n))
		}
	}
	return out
}
