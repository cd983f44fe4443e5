package apidoc

import (
	"strings"
	"unicode"
)

// clean drops the space after "//" that the generator keeps at the start
// of every comment line but the first; deeper indentation (a table in a
// comment) stays.
func clean(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(strings.TrimPrefix(l, " "), " ")
	}
	return strings.Join(lines, "\n")
}

// summary is the first sentence of a comment, on one line: up to the
// first ". " or the end of the first paragraph.
func summary(desc string) string {
	para, _, _ := strings.Cut(desc, "\n\n")
	para = strings.Join(strings.Fields(para), " ")
	if i := strings.Index(para, ". "); i >= 0 {
		return para[:i+1]
	}
	return para
}

// lowerCamel lowers the first letter of an RPC name: CreateOrder ->
// createOrder.
func lowerCamel(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// nameSummary spells an RPC name as a summary, for an RPC without a
// comment or option summary (descriptors read by server reflection have
// no comments): ListShipments -> "List shipments".
func nameSummary(name string) string {
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
