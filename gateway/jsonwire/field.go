package jsonwire

import (
	"reflect"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Field is one field of a message, as a route with response_body answers
// it: Marshal writes the field's value the way the message's encoding
// writes that member (short enum names, int64 as strings, an unset
// message as null), so a response_body answer is the same JSON as the
// member it is cut from.
type Field struct {
	Message protoreflect.Message
	Desc    protoreflect.FieldDescriptor
}

// appendField appends the JSON form of f's value.
func appendField(b []byte, f Field) ([]byte, error) {
	fd, m := f.Desc, f.Message
	switch {
	case !m.Has(fd) && fd.HasPresence():
		return append(b, "null"...), nil
	case fd.IsList():
		return appendList(b, m.Get(fd).List(), fd)
	case fd.IsMap():
		return appendMap(b, m.Get(fd).Map(), fd)
	}
	return appendSingular(b, m.Get(fd), fd)
}

// appendGenerated appends what grpc-gateway's generated response_body
// wrappers hand the marshaler besides a message: an enum, or a slice of
// messages or of enums (a repeated field), in the encoding's form. ok is
// false for anything else (scalars, maps), which JSONPb writes.
func appendGenerated(b []byte, v any) (out []byte, ok bool, err error) {
	if e, isEnum := v.(protoreflect.Enum); isEnum {
		return appendEnum(b, e.Number(), e.Descriptor()), true, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.Type().Elem().Kind() == reflect.Uint8 {
		return b, false, nil
	}
	elem := rv.Type().Elem()
	isMsg, isEnum := elem.Implements(messageType), elem.Implements(enumType)
	if !isMsg && !isEnum {
		return b, false, nil
	}
	b = append(b, '[')
	for i := range rv.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		switch x := rv.Index(i).Interface().(type) {
		case proto.Message:
			if b, err = appendMessage(b, x.ProtoReflect()); err != nil {
				return b, true, err
			}
		case protoreflect.Enum:
			b = appendEnum(b, x.Number(), x.Descriptor())
		}
	}
	return append(b, ']'), true, nil
}

var enumType = reflect.TypeFor[protoreflect.Enum]()
