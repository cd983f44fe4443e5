package gateway

import (
	"fmt"
	"net/url"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// location is a parsed Location template such as "/api/orders/{id}".
type location struct {
	parts []locPart
}

type locPart struct {
	lit   string
	field []protoreflect.FieldDescriptor // nil for a literal
}

// parseLocation parses tmpl against the response message md; every
// {field.path} must name a singular scalar field.
func parseLocation(tmpl string, md protoreflect.MessageDescriptor) (*location, error) {
	if tmpl == "" {
		return nil, nil
	}
	l := &location{}
	rest := tmpl
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			l.parts = append(l.parts, locPart{lit: rest})
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("location %q: unclosed {", tmpl)
		}
		if open > 0 {
			l.parts = append(l.parts, locPart{lit: rest[:open]})
		}
		fds, err := fieldPath(md, rest[open+1:open+end])
		if err != nil {
			return nil, fmt.Errorf("location %q: %w", tmpl, err)
		}
		l.parts = append(l.parts, locPart{field: fds})
		rest = rest[open+end+1:]
	}
	return l, nil
}

func fieldPath(md protoreflect.MessageDescriptor, path string) ([]protoreflect.FieldDescriptor, error) {
	var fds []protoreflect.FieldDescriptor
	for i, name := range strings.Split(path, ".") {
		if md == nil {
			return nil, fmt.Errorf("%q is not a message field path", path)
		}
		fd := md.Fields().ByName(protoreflect.Name(name))
		if fd == nil || fd.IsList() || fd.IsMap() {
			return nil, fmt.Errorf("%s has no singular field %q", md.FullName(), name)
		}
		fds = append(fds, fd)
		md = fd.Message()
		if last := i == len(strings.Split(path, "."))-1; last && md != nil {
			return nil, fmt.Errorf("%q is a message", path)
		}
	}
	return fds, nil
}

// expand fills the template from resp; ok is false when a field is empty.
func (l *location) expand(resp proto.Message) (string, bool) {
	var b strings.Builder
	for _, p := range l.parts {
		if p.field == nil {
			b.WriteString(p.lit)
			continue
		}
		m := resp.ProtoReflect()
		for _, fd := range p.field[:len(p.field)-1] {
			m = m.Get(fd).Message()
		}
		v := m.Get(p.field[len(p.field)-1])
		s := v.String()
		if s == "" {
			return "", false
		}
		b.WriteString(url.PathEscape(s))
	}
	return b.String(), true
}
