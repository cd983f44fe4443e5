package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// MaxDepth bounds the nesting of objects and arrays in a body.
const MaxDepth = 64

// Error is one problem with a JSON body.
type Error struct {
	// Field is the JSON path of the offending field, e.g.
	// "lines[0].quantity"; "" means the body as a whole.
	Field string
	// Pointer is the same location as an RFC 6901 JSON Pointer in URI
	// fragment form, e.g. "#/lines/0/quantity".
	Pointer string
	// Msg says what is wrong, e.g. "unknown field".
	Msg string
	// Syntax is true when the body is not well-formed JSON, false when it is
	// JSON that does not fit the message.
	Syntax bool
}

// Error returns "field: msg", or msg for the body as a whole.
func (e *Error) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Check validates data as the JSON form of md, walking it token by token,
// and returns data itself or a copy with short enum names spelled in full.
// Errors are *Error. Unmarshal calls it only for a body protojson rejects.
func Check(md protoreflect.MessageDescriptor, data []byte) ([]byte, error) {
	out, err := walk(md, data)
	if err != nil {
		return nil, err
	}
	if err := decodeOptions.Unmarshal(out, NewMessage(md)); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("body is not a valid %s", md.Name())}
	}
	return out, nil
}

// walk is Check without the protojson parse: it returns data, or a copy
// with short enum names spelled in full.
func walk(md protoreflect.MessageDescriptor, data []byte) ([]byte, error) {
	sw := newWalker(data)
	sw.badUTF8 = invalidUTF8(data)
	if err := sw.syntax(); err != nil {
		return nil, err
	}
	if sw.badUTF8 >= 0 { // not inside any token: the syntax walk missed it
		return nil, &Error{Msg: "body is not valid UTF-8", Syntax: true}
	}
	w := newWalker(data)
	if err := w.document(md); err != nil {
		return nil, err
	}
	if w.changed {
		return w.out.bytes(), nil
	}
	return data, nil
}

// invalidUTF8 returns the offset of data's first byte that is not valid
// UTF-8, or -1.
func invalidUTF8(data []byte) int64 {
	if utf8.Valid(data) {
		return -1
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return int64(i)
		}
		i += n
	}
	return -1
}

// NewMessage returns an empty message of md: the generated type when one
// is linked in, else a dynamic message.
func NewMessage(md protoreflect.MessageDescriptor) proto.Message {
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
		return mt.New().Interface()
	}
	return dynamicpb.NewMessage(md)
}

// syntax walks data as free-form JSON, so that every syntax error
// (malformed JSON, trailing data, nesting deeper than MaxDepth, a repeated
// key) is reported as one whatever shape error precedes it.
func (w *walker) syntax() error {
	tok, err := w.next()
	if err != nil {
		return err
	}
	if err := w.anyJSON(tok); err != nil {
		return err
	}
	return w.end()
}

// end requires the input to end after the top-level value.
func (w *walker) end() error {
	if _, err := w.dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{Msg: "unexpected data after the JSON value", Syntax: true}
	}
	return nil
}

// document walks one top-level value and requires the input to end there.
func (w *walker) document(md protoreflect.MessageDescriptor) error {
	tok, err := w.next()
	if err != nil {
		return err
	}
	if err := w.message(md, tok); err != nil {
		return err
	}
	return w.end()
}

// pathElem is one step of the path to the current value.
type pathElem struct {
	name  string
	index int
	kind  byte // 'f' field, 'i' list index, 'k' map key
}

func (w *walker) errorf(syntax bool, format string, args ...any) *Error {
	field, pointer := render(w.path)
	return &Error{Field: field, Pointer: pointer, Msg: fmt.Sprintf(format, args...), Syntax: syntax}
}

// render formats a path as a field path and a JSON Pointer fragment.
func render(path []pathElem) (string, string) {
	if len(path) == 0 {
		return "", ""
	}
	var f strings.Builder
	var p strings.Builder
	for _, e := range path {
		switch e.kind {
		case 'f':
			if f.Len() > 0 {
				f.WriteByte('.')
			}
			f.WriteString(e.name)
			p.WriteString("/" + pointerEscape(e.name))
		case 'i':
			fmt.Fprintf(&f, "[%d]", e.index)
			fmt.Fprintf(&p, "/%d", e.index)
		case 'k':
			b, _ := json.Marshal(e.name)
			fmt.Fprintf(&f, "[%s]", b)
			p.WriteString("/" + pointerEscape(e.name))
		}
	}
	return f.String(), "#" + (&url.URL{Fragment: p.String()}).EscapedFragment()
}

// pointerEscape escapes a reference token (RFC 6901 section 3).
func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// emitter re-writes the walked JSON compactly.
type emitter struct {
	buf      bytes.Buffer
	first    []bool
	afterKey bool
}

func (e *emitter) sep() {
	if e.afterKey {
		e.afterKey = false
		return
	}
	if n := len(e.first); n > 0 {
		if !e.first[n-1] {
			e.buf.WriteByte(',')
		}
		e.first[n-1] = false
	}
}

func (e *emitter) open(c byte) {
	e.sep()
	e.buf.WriteByte(c)
	e.first = append(e.first, true)
}

func (e *emitter) close(c byte) {
	e.first = e.first[:len(e.first)-1]
	e.buf.WriteByte(c)
}

func (e *emitter) key(k string) {
	e.sep()
	e.writeString(k)
	e.buf.WriteByte(':')
	e.afterKey = true
}

func (e *emitter) raw(s string) {
	e.sep()
	e.buf.WriteString(s)
}

func (e *emitter) str(s string) {
	e.sep()
	e.writeString(s)
}

func (e *emitter) writeString(s string) {
	b, _ := json.Marshal(s)
	e.buf.Write(b)
}

func (e *emitter) bytes() []byte { return e.buf.Bytes() }
