package jsonwire

import (
	"io"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Marshaler is the edge's runtime.Marshaler: runtime.JSONPb with
// unpopulated fields emitted, unknown fields rejected on decode, and
// renamed enums shortened on encode.
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

// Marshal encodes v; for a proto message, renamed enums are shortened.
func (m *Marshaler) Marshal(v any) ([]byte, error) {
	b, err := m.JSONPb.Marshal(v)
	if err != nil {
		return nil, err
	}
	if msg, ok := v.(proto.Message); ok {
		return Shorten(msg.ProtoReflect().Descriptor(), b), nil
	}
	return b, nil
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

// Shorten rewrites renamed enum values of the protojson encoding of md to
// their short names. Input it cannot walk comes back unchanged.
func Shorten(md protoreflect.MessageDescriptor, data []byte) []byte {
	if !hasRenamed(md) {
		return data
	}
	w := newWalker(data, shorten)
	if err := w.document(md); err != nil || !w.changed {
		return data
	}
	return w.out.bytes()
}
