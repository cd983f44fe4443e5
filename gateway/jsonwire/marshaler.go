package jsonwire

import (
	"bytes"
	"io"
	"reflect"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Marshaler is the edge's runtime.Marshaler: proto messages are encoded
// by appendMessage (protojson's form with unpopulated fields and short
// enum names, in one pass) and decoded by Unmarshal (one protojson parse);
// anything else is runtime.JSONPb's.
type Marshaler struct {
	runtime.JSONPb
}

var _ runtime.Marshaler = (*Marshaler)(nil)

// NewMarshaler returns the edge's marshaler.
func NewMarshaler() *Marshaler {
	return &Marshaler{runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{EmitUnpopulated: true},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}}
}

// Marshal encodes v: a message, a Field (a response_body answer on
// dynamic messages) or what a generated response_body wrapper hands over
// (an enum, a slice of messages or enums) in the encoding's form (short
// enum names); anything else as JSONPb does.
func (m *Marshaler) Marshal(v any) ([]byte, error) {
	switch x := v.(type) {
	case proto.Message:
		return appendMessage(nil, x.ProtoReflect())
	case Field:
		return appendField(nil, x)
	}
	if b, ok, err := appendGenerated(nil, v); ok {
		return b, err
	}
	return m.JSONPb.Marshal(v)
}

// NewEncoder returns an encoder that writes Marshal's output.
func (m *Marshaler) NewEncoder(w io.Writer) runtime.Encoder {
	return runtime.EncoderFunc(func(v any) error {
		b, err := m.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
}

// Unmarshal decodes data into v; a proto message, or a pointer to a
// message pointer, with Unmarshal.
func (m *Marshaler) Unmarshal(data []byte, v any) error {
	if msg, ok := protoTarget(v); ok {
		return Unmarshal(data, msg())
	}
	return m.JSONPb.Unmarshal(data, v)
}

// NewDecoder returns a decoder that reads all of r and decodes it with
// Unmarshal; an empty r is io.EOF, which grpc-gateway takes as no body.
// v is a proto message, or a pointer to a message pointer (a route with
// body: "field" decodes into &req.Field); anything else is JSONPb's.
func (m *Marshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		msg, ok := protoTarget(v)
		if !ok {
			return m.JSONPb.NewDecoder(r).Decode(v)
		}
		var buf bytes.Buffer
		if l, ok := r.(interface{ Len() int }); ok {
			buf.Grow(l.Len())
		}
		if _, err := buf.ReadFrom(r); err != nil {
			return err
		}
		if buf.Len() == 0 {
			return io.EOF
		}
		return Unmarshal(buf.Bytes(), msg())
	})
}

var messageType = reflect.TypeFor[proto.Message]()

// protoTarget reports whether v is a proto message or a pointer to a
// message pointer, and returns a function giving the message to decode
// into, allocating a nil field's message only when it is called.
func protoTarget(v any) (func() proto.Message, bool) {
	if msg, ok := v.(proto.Message); ok {
		return func() proto.Message { return msg }, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, false
	}
	field := rv.Elem()
	if field.Kind() != reflect.Pointer || !field.Type().Implements(messageType) {
		return nil, false
	}
	return func() proto.Message {
		if field.IsNil() {
			field.Set(reflect.New(field.Type().Elem()))
		}
		return field.Interface().(proto.Message)
	}, true
}
