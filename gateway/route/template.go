package route

import (
	"fmt"
	"slices"
	"strings"
)

type segKind int

const (
	literal segKind = iota
	single          // "*" or a plain variable
	multi           // "**"
)

type segment struct {
	kind segKind
	lit  string
	v    int // 1 + the index in Vars of the variable taking it; 0 for none
}

// parseTemplate parses a google.api.http path template into segments, its
// verb and the field paths of its variables.
func parseTemplate(t string) (segs []segment, verb string, vars []string, err error) {
	if !strings.HasPrefix(t, "/") {
		return nil, "", nil, fmt.Errorf("template %q does not start with /", t)
	}
	body := t[1:]
	if i := verbIndex(body); i >= 0 {
		body, verb = body[:i], body[i+1:]
		if verb == "" || strings.ContainsAny(verb, "/{}*") {
			return nil, "", nil, fmt.Errorf("template %q: bad verb", t)
		}
	}
	for _, part := range splitOutsideBraces(body) {
		s, v, err := parseSegment(part)
		if err != nil {
			return nil, "", nil, fmt.Errorf("template %q: %w", t, err)
		}
		if v != "" {
			vars = append(vars, v)
			for i := range s {
				s[i].v = len(vars)
			}
		}
		segs = append(segs, s...)
	}
	if err := checkMulti(segs); err != nil {
		return nil, "", nil, fmt.Errorf("template %q: %w", t, err)
	}
	return segs, verb, vars, nil
}

// verbIndex finds the ":" of a trailing verb outside braces, or -1.
func verbIndex(s string) int {
	depth, slash := 0, -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case '/':
			if depth == 0 {
				slash = i
			}
		case ':':
			if depth == 0 && i > slash {
				return i
			}
		}
	}
	return -1
}

// splitOutsideBraces splits s on "/" that are not inside a variable.
func splitOutsideBraces(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case '/':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// parseSegment parses one segment; a variable may expand to several.
func parseSegment(p string) ([]segment, string, error) {
	switch {
	case p == "":
		return nil, "", fmt.Errorf("empty segment")
	case p == "*":
		return []segment{{kind: single}}, "", nil
	case p == "**":
		return []segment{{kind: multi}}, "", nil
	case strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}"):
		name, sub, hasSub := strings.Cut(p[1:len(p)-1], "=")
		if name == "" || strings.ContainsAny(name, "{}/*") {
			return nil, "", fmt.Errorf("bad variable %q", p)
		}
		if !hasSub {
			return []segment{{kind: single}}, name, nil
		}
		var segs []segment
		for _, q := range strings.Split(sub, "/") {
			s, v, err := parseSegment(q)
			if err != nil || v != "" {
				return nil, "", fmt.Errorf("bad variable %q", p)
			}
			segs = append(segs, s...)
		}
		return segs, name, nil
	case strings.ContainsAny(p, "{}*"):
		return nil, "", fmt.Errorf("bad segment %q", p)
	}
	return []segment{{kind: literal, lit: p}}, "", nil
}

func checkMulti(segs []segment) error {
	n := 0
	for _, s := range segs {
		if s.kind == multi {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("more than one **")
	}
	return nil
}

// match reports whether comps (the path split on "/", verb removed) match
// the segments; "**" takes every component the segments after it leave.
// Wildcards never take an empty component: /api/orders/ names no order,
// so it is no route (404), not GetOrder with id "".
func match(segs []segment, comps []string) bool {
	pos := 0
	for i, s := range segs {
		switch s.kind {
		case literal:
			if pos >= len(comps) || comps[pos] != s.lit {
				return false
			}
			pos++
		case single:
			if pos >= len(comps) || comps[pos] == "" {
				return false
			}
			pos++
		case multi:
			rest := len(segs) - i - 1
			if len(comps)-pos < rest || slices.Contains(comps[pos:len(comps)-rest], "") {
				return false
			}
			pos = len(comps) - rest
		}
	}
	return pos == len(comps)
}

// capture returns the value of each variable in comps (which match segs),
// its components joined by "/", in the order of the template's Vars.
func capture(segs []segment, comps []string, nvars int) []string {
	vals := make([][]string, nvars)
	pos := 0
	for i, s := range segs {
		n := 1
		if s.kind == multi {
			n = len(comps) - pos - (len(segs) - i - 1)
		}
		if s.v > 0 {
			vals[s.v-1] = append(vals[s.v-1], comps[pos:pos+n]...)
		}
		pos += n
	}
	out := make([]string, nvars)
	for i, v := range vals {
		out[i] = strings.Join(v, "/")
	}
	return out
}
