package jsonwire

import (
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The edge reads exactly the JSON the published document describes, which
// is narrower than what protojson's parser takes: field names in
// lowerCamel only, 32-bit integers and floats as
// JSON numbers, 64-bit integers as strings of plain decimal digits, enum
// values by their short names, and null only for a singular message field. The walker enforces that; a body protojson
// accepts is walked only when suspect finds a spot where it might differ,
// so a conforming body costs one byte scan on top of the parse.

// keyClass says which first bytes of a member's value make the body suspect.
type keyClass uint8

const (
	wantNumber keyClass = 1 << iota // 32-bit integers and floats: a string is suspect
	wantString                      // 64-bit integers: a number is suspect
	anyValue                        // a proto name, an enum, a list of scalars, or a key that means different things in different messages
)

// keyTable classifies the member names of a message tree; all means every
// body is walked (a map of scalars or an Any, whose members the table
// cannot name).
type keyTable struct {
	keys map[string]keyClass
	all  bool
}

var keyTables sync.Map // protoreflect.FullName -> *keyTable

func tableOf(md protoreflect.MessageDescriptor) *keyTable {
	if t, ok := keyTables.Load(md.FullName()); ok {
		return t.(*keyTable)
	}
	t := &keyTable{keys: map[string]keyClass{}}
	t.add(md, map[protoreflect.FullName]bool{})
	keyTables.Store(md.FullName(), t)
	return t
}

func (t *keyTable) add(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) {
	if seen[md.FullName()] {
		return
	}
	seen[md.FullName()] = true
	if md.FullName() == "google.protobuf.Any" {
		t.all = true
		return
	}
	if _, ok := wellKnown[md.FullName()]; ok {
		return
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.TextName() != fd.JSONName() {
			t.set(fd.TextName(), anyValue)
		}
		t.set(fd.JSONName(), classOf(fd))
		switch {
		case fd.IsMap():
			if v := fd.MapValue(); v.Message() != nil {
				t.add(v.Message(), seen)
			} else if classOf(v) != 0 {
				t.all = true
			}
		case fd.Message() != nil:
			t.add(fd.Message(), seen)
		}
	}
}

func (t *keyTable) set(key string, c keyClass) {
	if old, ok := t.keys[key]; ok && old != c {
		c = anyValue
	}
	t.keys[key] = c
}

// classOf is what makes a value of fd suspect.
func classOf(fd protoreflect.FieldDescriptor) keyClass {
	k := fd.Kind()
	if md := fd.Message(); md != nil && !fd.IsMap() {
		if _, wrapped := wellKnown[md.FullName()]; wrapped && md.Fields().ByName("value") != nil && md.FullName() != "google.protobuf.Value" {
			k = md.Fields().ByName("value").Kind()
		} else {
			return 0
		}
	}
	var c keyClass
	switch k {
	case protoreflect.EnumKind:
		return anyValue
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		c = wantNumber
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.BoolKind, protoreflect.MessageKind, protoreflect.GroupKind:
		return 0
	default:
		c = wantNumber
		if r := intRanges[k]; r.max > 1<<32 {
			c = wantString
		}
	}
	if fd.IsList() {
		return anyValue
	}
	return c
}

// suspect reports whether data, a body protojson accepted as md, may hold
// something the published document does not allow: it is then walked.
func suspect(md protoreflect.MessageDescriptor, data []byte) bool {
	t := tableOf(md)
	if t.all {
		return true
	}
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case 'n': // outside a string, only null starts with n
			return true
		case '"':
			start, escaped := i+1, false
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					escaped = true
					i++
				}
			}
			key := data[start:min(i, len(data))]
			j := skipSpace(data, i+1)
			if j >= len(data) || data[j] != ':' {
				continue // a string value
			}
			class, known := t.keys[string(key)]
			if escaped {
				return true
			}
			if !known || class == 0 {
				continue
			}
			j = skipSpace(data, j+1)
			if j >= len(data) || class == anyValue {
				return true
			}
			v := data[j]
			if class == wantNumber && v == '"' || class == wantString && (v == '-' || v >= '0' && v <= '9') {
				return true
			}
			if class == wantString && v == '"' && !canonicalQuoted(data[j+1:]) {
				return true
			}
		}
	}
	return false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// canonicalQuoted reports whether data starts with a canonical integer
// (canonicalInt) and its closing quote.
func canonicalQuoted(data []byte) bool {
	end := 0
	for end < len(data) && data[end] != '"' {
		if data[end] == '\\' {
			return false
		}
		end++
	}
	return end < len(data) && canonicalInt(string(data[:end]))
}
