package jsonwire

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// decodeOptions reject unknown fields (protojson's default, stated).
var decodeOptions = protojson.UnmarshalOptions{DiscardUnknown: false}

// Unmarshal decodes data, the JSON form of m's message, into m, with one
// protojson parse for a body protojson takes as it is and a byte scan
// (suspect) finds conforming. A body protojson rejects, or one the scan
// suspects of a spelling protojson takes but the document does not (see
// strict.go), is walked as Check walks it: to report the problem with its
// field path, or to spell short enum names in full and parse again.
// Nesting deeper than MaxDepth is found by a byte scan first. Errors are
// *Error.
func Unmarshal(data []byte, m proto.Message) error {
	md := m.ProtoReflect().Descriptor()
	if depthWithin(data, MaxDepth) {
		if err := decodeOptions.Unmarshal(data, m); err == nil && !suspect(md, data) {
			return nil
		}
	}
	proto.Reset(m)
	full, err := walk(md, data)
	if err != nil {
		return err
	}
	if err := decodeOptions.Unmarshal(full, m); err != nil {
		return &Error{Msg: fmt.Sprintf("body is not a valid %s", md.Name())}
	}
	return nil
}

// depthWithin reports whether the objects and arrays of data nest at most
// max deep, counting brackets outside strings; it does not check syntax.
func depthWithin(data []byte, max int) bool {
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return false
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return true
}
