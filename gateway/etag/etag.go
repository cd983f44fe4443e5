package etag

import (
	"errors"
	"strings"
)

// Bounds on one header field (all of its values together).
const (
	// MaxBytes is the most bytes of values Parse reads: room for
	// MaxTags tags of the edge's own 22-character form and many longer.
	MaxBytes = 2048
	// MaxTags is the most entity tags a list may hold.
	MaxTags = 32
)

// Errors Parse returns; the edge answers each with 400.
var (
	ErrMalformed = errors.New(`etag: malformed entity tag list: want "*" or a comma-separated list of "opaque" or W/"opaque"`)
	ErrTooLong   = errors.New("etag: header longer than 2048 bytes")
	ErrTooMany   = errors.New("etag: more than 32 entity tags")
)

// Tag is one entity tag. Opaque excludes the quotes.
type Tag struct {
	Weak   bool
	Opaque string
}

// Strong returns the strong tag "opaque".
func Strong(opaque string) Tag { return Tag{Opaque: opaque} }

// Weak returns the weak tag W/"opaque".
func Weak(opaque string) Tag { return Tag{Weak: true, Opaque: opaque} }

// String is the tag as a header value: "opaque" or W/"opaque".
func (t Tag) String() string {
	if t.Weak {
		return `W/"` + t.Opaque + `"`
	}
	return `"` + t.Opaque + `"`
}

// StrongMatch reports strong equality (RFC 9110 section 8.8.3.2): both
// strong and the same opaque string.
func (t Tag) StrongMatch(u Tag) bool { return !t.Weak && !u.Weak && t.Opaque == u.Opaque }

// WeakMatch reports weak equality: the same opaque string, either weak.
func (t Tag) WeakMatch(u Tag) bool { return t.Opaque == u.Opaque }

// ValidOpaque reports whether s can be a tag's opaque string: etagc
// characters only (%x21 / %x23-7E / obs-text), so "s" is a valid tag.
func ValidOpaque(s string) bool {
	for i := 0; i < len(s); i++ {
		if !etagc(s[i]) {
			return false
		}
	}
	return true
}

func etagc(c byte) bool { return c == 0x21 || c >= 0x23 && c != 0x7f }

// Condition is one parsed If-Match or If-None-Match field. The zero value
// is an absent field.
type Condition struct {
	Present bool  // the field was sent
	Any     bool  // "*"
	Tags    []Tag // the list, in the order sent; empty when Any
}

// MatchStrong reports whether the condition holds for a representation
// whose current tag is cur (If-Match: strong comparison); exists reports
// that there is a current representation at all, which "*" needs.
func (c Condition) MatchStrong(cur Tag, exists bool) bool {
	return c.match(cur, exists, Tag.StrongMatch)
}

// MatchWeak reports whether any listed tag weakly matches cur, or the
// condition is "*" and a representation exists (If-None-Match is false,
// 304, exactly when this is true).
func (c Condition) MatchWeak(cur Tag, exists bool) bool { return c.match(cur, exists, Tag.WeakMatch) }

func (c Condition) match(cur Tag, exists bool, eq func(Tag, Tag) bool) bool {
	if !exists {
		return false
	}
	if c.Any {
		return true
	}
	for _, t := range c.Tags {
		if eq(t, cur) {
			return true
		}
	}
	return false
}

// Parse reads the values of one If-Match or If-None-Match field, each a
// comma-separated list (RFC 9110 section 5.3: several field lines combine
// into one list). No values is an absent field. "*" must be the only
// member. Empty list members (", ,") are skipped, as section 5.6.1 asks;
// a field with no member at all is malformed.
func Parse(values []string) (Condition, error) {
	if len(values) == 0 {
		return Condition{}, nil
	}
	n := 0
	for _, v := range values {
		if n += len(v); n > MaxBytes {
			return Condition{}, ErrTooLong
		}
	}
	c := Condition{Present: true}
	for _, v := range values {
		if err := c.parseLine(v); err != nil {
			return Condition{}, err
		}
	}
	if !c.Any && len(c.Tags) == 0 {
		return Condition{}, ErrMalformed
	}
	return c, nil
}

// parseLine adds the members of one field line to c.
func (c *Condition) parseLine(s string) error {
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil
		}
		if s[0] == ',' {
			s = s[1:]
			continue
		}
		rest, err := c.member(s)
		if err != nil {
			return err
		}
		s = strings.TrimLeft(rest, " \t")
		if s != "" && s[0] != ',' {
			return ErrMalformed
		}
	}
}

// member reads one "*" or tag from the start of s and returns the rest.
func (c *Condition) member(s string) (string, error) {
	if s[0] == '*' {
		if c.Any || len(c.Tags) > 0 {
			return "", ErrMalformed
		}
		c.Any = true
		return s[1:], nil
	}
	if c.Any {
		return "", ErrMalformed
	}
	t, rest, ok := cutTag(s)
	if !ok {
		return "", ErrMalformed
	}
	if len(c.Tags) == MaxTags {
		return "", ErrTooMany
	}
	c.Tags = append(c.Tags, t)
	return rest, nil
}

// cutTag reads [W/]"etagc*" from the start of s.
func cutTag(s string) (Tag, string, bool) {
	var t Tag
	if strings.HasPrefix(s, "W/") {
		t.Weak, s = true, s[2:]
	}
	if s == "" || s[0] != '"' {
		return Tag{}, "", false
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 || !ValidOpaque(s[1:1+end]) {
		return Tag{}, "", false
	}
	t.Opaque = s[1 : 1+end]
	return t, s[2+end:], true
}
