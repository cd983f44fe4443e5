package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// walker streams the tokens of one JSON document against a message
// descriptor, validating them and re-emitting them with short enum names
// spelled in full.
type walker struct {
	dec     *json.Decoder
	out     emitter
	path    []pathElem
	depth   int
	changed bool
	// badUTF8 is the offset of the input's first invalid UTF-8 byte, or
	// -1: the token holding it is reported with its path (encoding/json
	// would quietly read it as U+FFFD).
	badUTF8 int64
	// inKey is set while members reads a member name.
	inKey bool
}

func newWalker(data []byte) *walker {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return &walker{dec: dec, badUTF8: -1}
}

// next reads one token, turning decoder errors into syntax errors that do
// not quote encoding/json.
func (w *walker) next() (json.Token, error) {
	tok, err := w.dec.Token()
	if err == nil && w.badUTF8 >= 0 && w.dec.InputOffset() > w.badUTF8 {
		// The token just read holds the invalid byte: a string, since a
		// byte outside one is a syntax error.
		w.badUTF8 = -1
		if w.inKey {
			return nil, w.errorf(true, "a member name is not valid UTF-8")
		}
		if len(w.path) == 0 {
			return nil, &Error{Msg: "body is not valid UTF-8", Syntax: true}
		}
		return nil, w.errorf(true, "not valid UTF-8")
	}
	if err == nil {
		return tok, nil
	}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return nil, &Error{Msg: "malformed JSON near byte " + itoa(se.Offset), Syntax: true}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, &Error{Msg: "unexpected end of JSON", Syntax: true}
	}
	return nil, &Error{Msg: "malformed JSON", Syntax: true}
}

func (w *walker) push(e pathElem) { w.path = append(w.path, e) }

func (w *walker) pop() { w.path = w.path[:len(w.path)-1] }

func (w *walker) enter() error {
	if w.depth++; w.depth > MaxDepth {
		return w.errorf(true, "nested deeper than %d levels", MaxDepth)
	}
	return nil
}

func (w *walker) leave() { w.depth-- }

// message walks a message value whose first token is tok.
func (w *walker) message(md protoreflect.MessageDescriptor, tok json.Token) error {
	if tok == nil {
		w.out.raw("null")
		return nil
	}
	if wkt, ok := wellKnown[md.FullName()]; ok {
		return wkt(w, md, tok)
	}
	if tok != json.Delim('{') {
		return w.errorf(false, "want a JSON object")
	}
	return w.object(md)
}

// object walks the members of a message object after its "{".
func (w *walker) object(md protoreflect.MessageDescriptor) error {
	byNumber := map[protoreflect.FieldNumber]string{}
	oneofs := map[protoreflect.FullName]string{}
	return w.members('f', func(key string) error { return w.member(md, key, byNumber, oneofs) })
}

// members walks the members of any JSON object after its "{": each key
// once (a repeated key is an error, which encoding/json would silently
// accept; protojson rejects it too, without a path), within the depth
// limit, with the key on the error path while member walks its value.
func (w *walker) members(kind byte, member func(key string) error) error {
	if err := w.enter(); err != nil {
		return err
	}
	defer w.leave()
	w.out.open('{')
	keys := map[string]bool{}
	for w.dec.More() {
		w.inKey = true
		tok, err := w.next()
		w.inKey = false
		if err != nil {
			return err
		}
		key := tok.(string)
		w.push(pathElem{name: key, kind: kind})
		if keys[key] {
			return w.errorf(true, "duplicate key")
		}
		keys[key] = true
		if err := member(key); err != nil {
			return err
		}
		w.pop()
	}
	if _, err := w.next(); err != nil {
		return err
	}
	w.out.close('}')
	return nil
}

// member walks one "key": value of a message object.
func (w *walker) member(md protoreflect.MessageDescriptor, key string,
	byNumber map[protoreflect.FieldNumber]string, oneofs map[protoreflect.FullName]string) error {
	fd := md.Fields().ByJSONName(key)
	if fd == nil {
		if pn := md.Fields().ByTextName(key); pn != nil {
			return w.errorf(false, "unknown field; this API spells it %q", pn.JSONName())
		}
		return w.errorf(false, "unknown field")
	}
	if other, dup := byNumber[fd.Number()]; dup {
		return w.errorf(false, "sets the same field as %q", other)
	}
	byNumber[fd.Number()] = key
	tok, err := w.next()
	if err != nil {
		return err
	}
	if od := fd.ContainingOneof(); od != nil && tok != nil {
		if other, dup := oneofs[od.FullName()]; dup {
			return w.errorf(false, "only one of the fields of %s may be set; %q is set too", od.Name(), other)
		}
		oneofs[od.FullName()] = key
	}
	w.out.key(key)
	return w.field(fd, tok)
}

// field walks the value of one field whose first token is tok.
func (w *walker) field(fd protoreflect.FieldDescriptor, tok json.Token) error {
	switch {
	case tok == nil && (fd.IsList() || fd.IsMap() || fd.Message() == nil) && !nullable(fd):
		return w.errorf(false, "null is not a value of this field; leave the field out")
	case tok == nil:
		w.out.raw("null")
		return nil
	case fd.IsMap():
		return w.mapValue(fd, tok)
	case fd.IsList():
		return w.list(fd, tok)
	}
	return w.singular(fd, tok)
}

func (w *walker) singular(fd protoreflect.FieldDescriptor, tok json.Token) error {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return w.message(fd.Message(), tok)
	case protoreflect.EnumKind:
		return w.enum(fd.Enum(), tok)
	}
	return w.scalar(fd.Kind(), tok)
}

func (w *walker) list(fd protoreflect.FieldDescriptor, tok json.Token) error {
	if tok != json.Delim('[') {
		return w.errorf(false, "want a JSON array")
	}
	return w.elements(func(tok json.Token) error {
		if tok == nil && !nullable(fd) {
			return w.errorf(false, "null is not allowed in a list")
		}
		return w.singular(fd, tok)
	})
}

// elements walks the elements of any JSON array after its "[", within the
// depth limit, with the index on the error path while element walks each
// value (whose first token it is given).
func (w *walker) elements(element func(tok json.Token) error) error {
	if err := w.enter(); err != nil {
		return err
	}
	defer w.leave()
	w.out.open('[')
	for i := 0; w.dec.More(); i++ {
		w.push(pathElem{index: i, kind: 'i'})
		tok, err := w.next()
		if err != nil {
			return err
		}
		if err := element(tok); err != nil {
			return err
		}
		w.pop()
	}
	if _, err := w.next(); err != nil {
		return err
	}
	w.out.close(']')
	return nil
}

func (w *walker) mapValue(fd protoreflect.FieldDescriptor, tok json.Token) error {
	if tok != json.Delim('{') {
		return w.errorf(false, "want a JSON object")
	}
	return w.members('k', func(key string) error { return w.mapEntry(fd, key) })
}

func (w *walker) mapEntry(fd protoreflect.FieldDescriptor, key string) error {
	if !validMapKey(fd.MapKey().Kind(), key) {
		return w.errorf(false, "map key is not %s", Describe(fd.MapKey()))
	}
	w.out.key(key)
	tok, err := w.next()
	if err != nil {
		return err
	}
	if tok == nil && !nullable(fd.MapValue()) {
		return w.errorf(false, "null is not allowed as a map value")
	}
	return w.singular(fd.MapValue(), tok)
}

// nullable reports whether JSON null is a value of fd's type rather than
// "unset": google.protobuf.Value and google.protobuf.NullValue.
func nullable(fd protoreflect.FieldDescriptor) bool {
	if m := fd.Message(); m != nil {
		return m.FullName() == "google.protobuf.Value"
	}
	if e := fd.Enum(); e != nil {
		return e.FullName() == "google.protobuf.NullValue"
	}
	return false
}

// anyJSON walks a free-form value (Struct, Value, ListValue, Any),
// checking only syntax, depth and duplicate keys.
func (w *walker) anyJSON(tok json.Token) error {
	switch tok {
	case json.Delim('{'):
		return w.anyObject()
	case json.Delim('['):
		return w.anyArray()
	}
	w.scalarOut(tok)
	return nil
}

func (w *walker) anyObject() error {
	return w.members('f', func(key string) error {
		w.out.key(key)
		tok, err := w.next()
		if err != nil {
			return err
		}
		return w.anyJSON(tok)
	})
}

func (w *walker) anyArray() error { return w.elements(w.anyJSON) }

// scalarOut re-emits a scalar token.
func (w *walker) scalarOut(tok json.Token) {
	switch v := tok.(type) {
	case nil:
		w.out.raw("null")
	case bool:
		if v {
			w.out.raw("true")
		} else {
			w.out.raw("false")
		}
	case json.Number:
		w.out.raw(string(v))
	case string:
		w.out.str(v)
	}
}
