package prefer

import "strings"

// split splits s at the bytes sep outside quoted strings (a list at
// commas, an element at semicolons); an unclosed quote is ErrMalformed.
func split(s string, sep byte) ([]string, error) {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	if quoted {
		return nil, ErrMalformed
	}
	return append(parts, s[start:]), nil
}

// pair parses `token [ BWS "=" BWS word ]` with surrounding whitespace and
// returns the lower-cased token and the unquoted word.
func pair(s string) (string, string, error) {
	name, value, hasValue := strings.Cut(s, "=")
	name = strings.Trim(name, " \t")
	if !isToken(name) {
		return "", "", ErrMalformed
	}
	name = strings.ToLower(name)
	if !hasValue {
		return name, "", nil
	}
	v, err := word(strings.Trim(value, " \t"))
	return name, v, err
}

// word parses a token or a quoted-string (RFC 9110 section 5.6.4).
func word(s string) (string, error) {
	if isToken(s) {
		return s, nil
	}
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", ErrMalformed
	}
	var b strings.Builder
	in := s[1 : len(s)-1]
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case c == '\\' && i+1 < len(in) && isQuotable(in[i+1]):
			i++
			b.WriteByte(in[i])
		case c == '"' || c == '\\' || !isQdtext(c):
			return "", ErrMalformed
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// isQdtext: HTAB, SP, and visible ASCII but '"' and '\' (obs-text refused).
func isQdtext(c byte) bool { return c == '\t' || c == ' ' || (c > 0x20 && c < 0x7f) }

// isQuotable: what a quoted-pair may escape (obs-text refused).
func isQuotable(c byte) bool { return c == '\t' || (c >= 0x20 && c < 0x7f) }
