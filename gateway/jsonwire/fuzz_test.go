package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// FuzzUnmarshal holds the decoder to properties on any input, syntax
// errors included. It never panics, and for a request message and a
// message with enums and timestamps:
//   - Unmarshal and Check accept the same bodies;
//   - what is accepted round-trips through Marshal, and protojson accepts
//     it (with short enum names spelled in full);
//   - what protojson accepts within MaxDepth is accepted, or refused at a
//     field for a spelling the published document does not allow
//     (strictOnly);
//   - what is not JSON, is nested deeper than MaxDepth or repeats a key
//     in any object is rejected as a syntax error;
//   - a body decoded into a field (a route with body: "field") gets the
//     same answer as one decoded into the message.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"lines":[{"sku":"keyboard-001","quantity":2}],"paymentMethod":"pm_card_ok"}`,
		`{"lines":[{"quantity":1e2}]}`, `{"lines":[{"quantity":"-0"}]}`, `{"payment_method":"x"}`,
		`{"lines":[{"quantity":1.5}]}`, `{"a":1,"a":2}`, `[`, `{"lines":[{"unitPrice":{"amountMinor":"12"}}]}`,
		`{"lines":[{"unitPrice":{"amountMinor":1e18}}]}`, `{"lines":[null]}`, "\"\xff\"", `{"lines":[{"quantity":-2147483648}]}`,
		`{"paymentMethod":"a","paymentMethod":"b"}`, `{"lines":[{"sku":"a","sku":"b"}]}`, `{"status":"CONFIRMED","status":"FAILED"}`,
		`{"status":"CONFIRMED","createTime":"2026-01-02T15:04:05Z"}`, `{"status":"STATUS_FAILED"}`, `{"status":2}`,
		`{"lines":[[[[[[[[]]]]]]]]}`, `{"id":"\u00e9\"\\"} `, `{} {}`,
		`{"lines":[{"unitPrice":{"amountMinor":"1e2"}}]}`, `{"lines":[{"unitPrice":{"amountMinor":"-0"}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, md := range []protoreflect.MessageDescriptor{createOrder, order} {
			checkProperties(t, md, data)
		}
		checkBodyField(t, data)
	})
}

// checkBodyField: the marshaler's decoder treats &req.Field (a pointer to
// a message pointer) exactly as the message itself.
func checkBodyField(t *testing.T, data []byte) {
	var whole orderv1.Order
	werr := NewMarshaler().NewDecoder(bytes.NewReader(data)).Decode(&whole)
	var field *orderv1.Order
	ferr := NewMarshaler().NewDecoder(bytes.NewReader(data)).Decode(&field)
	if fmt.Sprint(werr) != fmt.Sprint(ferr) {
		t.Fatalf("%q: the message decodes with %v, the field with %v", data, werr, ferr)
	}
	if werr == nil && !proto.Equal(&whole, field) {
		t.Fatalf("%q: the message decodes to %v, the field to %v", data, &whole, field)
	}
}

func checkProperties(t *testing.T, md protoreflect.MessageDescriptor, data []byte) {
	msg := NewMessage(md)
	err := Unmarshal(data, msg)
	full, cerr := Check(md, data)
	if (err == nil) != (cerr == nil) {
		t.Fatalf("%s %q: Unmarshal says %v, Check says %v", md.Name(), data, err, cerr)
	}
	var je *Error
	if err != nil && !errors.As(err, &je) {
		t.Fatalf("%s %q: error %v is not an *Error", md.Name(), data, err)
	}
	wellFormed := json.Valid(data) && depthWithin(data, MaxDepth)
	switch {
	case !wellFormed && (err == nil || !je.Syntax):
		t.Fatalf("%s %q: malformed or too deep, but Unmarshal says %v", md.Name(), data, err)
	case wellFormed && utf8.Valid(data) && duplicateKey(data) && (err == nil || !je.Syntax):
		t.Fatalf("%s %q: repeats a key, but Unmarshal says %v", md.Name(), data, err)
	}
	if perr := protojson.Unmarshal(data, NewMessage(md)); perr == nil && depthWithin(data, MaxDepth) && err != nil && !strictOnly(je) {
		t.Fatalf("%s %q: protojson accepts it, Unmarshal says %v", md.Name(), data, err)
	}
	if err != nil {
		return
	}
	if perr := protojson.Unmarshal(full, NewMessage(md)); perr != nil {
		t.Fatalf("%s %q: accepted, but protojson rejects %q: %v", md.Name(), data, full, perr)
	}
	out, merr := NewMarshaler().Marshal(msg)
	if merr != nil {
		t.Fatalf("%s %q: accepted, but Marshal fails: %v", md.Name(), data, merr)
	}
	again := NewMessage(md)
	if err := Unmarshal(out, again); err != nil || !proto.Equal(msg, again) {
		t.Fatalf("%s %q: Marshal wrote %s, which decodes to %v (%v), not %v", md.Name(), data, out, again, err, msg)
	}
}

// duplicateKey reports whether any object in the JSON document data has a
// key twice; data must be valid JSON (and is nested a bounded depth).
func duplicateKey(data []byte) bool {
	dup, _ := duplicateIn(json.NewDecoder(bytes.NewReader(data)))
	return dup
}

func duplicateIn(dec *json.Decoder) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	switch tok {
	case json.Delim('{'):
		keys := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return false, err
			}
			if keys[k.(string)] {
				return true, nil
			}
			keys[k.(string)] = true
			if dup, err := duplicateIn(dec); dup || err != nil {
				return dup, err
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		for dec.More() {
			if dup, err := duplicateIn(dec); dup || err != nil {
				return dup, err
			}
		}
		_, err = dec.Token()
	}
	return false, err
}

// strictOnly reports whether e refuses a spelling protojson takes but the
// published document does not: a proto field name, an integer or float
// in the other JSON type, an enum by its full name or number, or a null.
func strictOnly(e *Error) bool {
	for _, m := range []string{"unknown field; this API spells it", "as a JSON number, not a string",
		"want a JSON string holding the integer", "plain decimal digits", "want a number", "want one of", "null is not a value"} {
		if e.Field != "" && !e.Syntax && strings.Contains(e.Msg, m) {
			return true
		}
	}
	return false
}
