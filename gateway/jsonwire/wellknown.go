package jsonwire

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// wellKnown walks the well-known types whose JSON form is not an object of
// their fields (https://protobuf.dev/programming-guides/json/).
var wellKnown = map[protoreflect.FullName]func(w *walker, md protoreflect.MessageDescriptor, tok json.Token) error{
	"google.protobuf.Timestamp":   timestamp,
	"google.protobuf.Duration":    duration,
	"google.protobuf.FieldMask":   stringValue,
	"google.protobuf.Struct":      freeObject,
	"google.protobuf.Any":         freeObject,
	"google.protobuf.ListValue":   freeArray,
	"google.protobuf.Value":       freeValue,
	"google.protobuf.DoubleValue": wrapper,
	"google.protobuf.FloatValue":  wrapper,
	"google.protobuf.Int64Value":  wrapper,
	"google.protobuf.UInt64Value": wrapper,
	"google.protobuf.Int32Value":  wrapper,
	"google.protobuf.UInt32Value": wrapper,
	"google.protobuf.BoolValue":   wrapper,
	"google.protobuf.StringValue": wrapper,
	"google.protobuf.BytesValue":  wrapper,
}

func timestamp(w *walker, _ protoreflect.MessageDescriptor, tok json.Token) error {
	s, ok := tok.(string)
	if !ok {
		return w.errorf(false, "want an RFC 3339 timestamp string such as 2026-01-02T15:04:05Z")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() < 1 || t.Year() > 9999 {
		return w.errorf(false, "want an RFC 3339 timestamp string such as 2026-01-02T15:04:05Z")
	}
	w.out.str(s)
	return nil
}

func duration(w *walker, _ protoreflect.MessageDescriptor, tok json.Token) error {
	s, ok := tok.(string)
	if !ok || !strings.HasSuffix(s, "s") {
		return w.errorf(false, "want a duration string such as 1.5s")
	}
	if _, err := strconv.ParseFloat(strings.TrimSuffix(s, "s"), 64); err != nil {
		return w.errorf(false, "want a duration string such as 1.5s")
	}
	w.out.str(s)
	return nil
}

func stringValue(w *walker, _ protoreflect.MessageDescriptor, tok json.Token) error {
	s, ok := tok.(string)
	if !ok {
		return w.errorf(false, "want a string")
	}
	w.out.str(s)
	return nil
}

func freeObject(w *walker, _ protoreflect.MessageDescriptor, tok json.Token) error {
	if tok != json.Delim('{') {
		return w.errorf(false, "want a JSON object")
	}
	return w.anyObject()
}

func freeArray(w *walker, _ protoreflect.MessageDescriptor, tok json.Token) error {
	if tok != json.Delim('[') {
		return w.errorf(false, "want a JSON array")
	}
	return w.anyArray()
}

func freeValue(w *walker, _ protoreflect.MessageDescriptor, tok json.Token) error {
	return w.anyJSON(tok)
}

// wrapper walks google.protobuf.XxxValue as the bare scalar it wraps.
func wrapper(w *walker, md protoreflect.MessageDescriptor, tok json.Token) error {
	return w.scalar(md.Fields().ByName("value").Kind(), tok)
}
