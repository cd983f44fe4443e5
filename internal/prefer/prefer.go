package prefer

import (
	"errors"
	"strings"
)

// RespondAsync is the preference for an asynchronous answer (RFC 7240
// section 4.1): 202 Accepted now, the outcome later at the Location.
const RespondAsync = "respond-async"

// Metadata keys between the edge and a service.
const (
	// MetadataKey is the request metadata carrying the caller's
	// preferences, in Prefer syntax.
	MetadataKey = "prefer"
	// AppliedKey is the response header metadata naming the preferences
	// the service applied (RFC 7240's Preference-Applied).
	AppliedKey = "preference-applied"
)

// Bounds of what Parse reads.
const (
	// MaxBytes bounds the Prefer field lines together.
	MaxBytes = 1024
	// MaxPreferences bounds the list elements, empty ones included.
	MaxPreferences = 16
)

// Parse errors.
var (
	ErrTooLong   = errors.New("prefer: more than 1024 bytes or 16 preferences")
	ErrMalformed = errors.New("prefer: malformed Prefer header")
)

// Preference is one element of the list.
type Preference struct {
	// Name is the preference token, lower-cased.
	Name string
	// Value is its value, unquoted; "" when absent.
	Value string
	// Params are its parameters in order, names lower-cased.
	Params []Param
}

// Param is a preference's parameter.
type Param struct {
	Name, Value string
}

// Preferences are a request's preferences, each name once, in the order
// sent.
type Preferences []Preference

// Has reports whether the preference name (lower case) was sent.
func (ps Preferences) Has(name string) bool {
	_, ok := ps.find(name)
	return ok
}

// find returns the preference name (lower case), if it was sent.
func (ps Preferences) find(name string) (Preference, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p, true
		}
	}
	return Preference{}, false
}

// Flag reports whether the preference name (lower case), one defined
// without a value such as respond-async, was sent without one. A value
// ("respond-async=false") makes it another preference, not applied: RFC
// 7240 defines no value for it, and applying "=false" would do the
// opposite of what its sender meant. An empty value (`=""`) is no value
// (RFC 7240 section 2). Parameters do not matter.
func (ps Preferences) Flag(name string) bool {
	p, ok := ps.find(name)
	return ok && p.Value == ""
}

// Parse reads the Prefer field lines of one request (nil or empty: no
// preferences).
func Parse(lines []string) (Preferences, error) {
	n, elems := 0, 0
	for _, l := range lines {
		n += len(l)
	}
	if n > MaxBytes {
		return nil, ErrTooLong
	}
	var out Preferences
	for _, l := range lines {
		list, err := split(l, ',')
		if err != nil {
			return nil, err
		}
		for _, elem := range list {
			if elems++; elems > MaxPreferences {
				return nil, ErrTooLong
			}
			p, ok, err := parseElement(elem)
			if err != nil {
				return nil, err
			}
			if ok && !out.Has(p.Name) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// parseElement parses one list element; ok is false for an empty one,
// which a list may hold (RFC 9110 section 5.6.1.2).
func parseElement(elem string) (Preference, bool, error) {
	parts, err := split(elem, ';')
	if err != nil {
		return Preference{}, false, err
	}
	if strings.TrimSpace(parts[0]) == "" {
		if len(parts) > 1 {
			return Preference{}, false, ErrMalformed
		}
		return Preference{}, false, nil
	}
	name, value, err := pair(parts[0])
	if err != nil {
		return Preference{}, false, err
	}
	p := Preference{Name: name, Value: value}
	for _, part := range parts[1:] {
		if strings.TrimSpace(part) == "" {
			continue // "*( OWS ";" [ OWS parameter ] )": a parameter may be empty
		}
		pn, pv, err := pair(part)
		if err != nil {
			return Preference{}, false, err
		}
		p.Params = append(p.Params, Param{Name: pn, Value: pv})
	}
	return p, true, nil
}
