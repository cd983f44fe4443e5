package jsonwire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// encodeOptions are protojson's for what the encoder hands to it: the
// well-known types, whose JSON form is not an object of their fields.
var encodeOptions = protojson.MarshalOptions{EmitUnpopulated: true}

var errInvalidUTF8 = errors.New("jsonwire: string field holds invalid UTF-8")

// appendMessage appends the JSON form of m as protojson writes it with
// EmitUnpopulated (fields in declaration order, lowerCamel names, int64
// as strings, unset message and optional fields as null, unset oneofs
// left out, map keys sorted), except that renamed enum values are written
// short (see Prefix): the one place the edge's enum spelling is decided.
func appendMessage(b []byte, m protoreflect.Message) ([]byte, error) {
	md := m.Descriptor()
	if md.FullName() == timestampName {
		return appendTimestamp(b, m)
	}
	if _, wkt := wellKnown[md.FullName()]; wkt || md.ExtensionRanges().Len() > 0 {
		// protojson writes the well-known types and any message that may
		// carry extensions (none of the APIs has one).
		return appendProtojson(b, m)
	}
	b = append(b, '{')
	fields := md.Fields()
	first := true
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		has := m.Has(fd)
		if !has && fd.ContainingOneof() != nil {
			continue // protojson leaves unset oneof members out
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b, _ = appendString(b, fd.JSONName())
		b = append(b, ':')
		var err error
		switch {
		case !has && fd.HasPresence():
			b = append(b, "null"...)
		case fd.IsList():
			b, err = appendList(b, m.Get(fd).List(), fd)
		case fd.IsMap():
			b, err = appendMap(b, m.Get(fd).Map(), fd)
		default:
			b, err = appendSingular(b, m.Get(fd), fd)
		}
		if err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendProtojson appends protojson's form of m, compacted: protojson
// puts random spaces between the members of an object or array (its
// output is deliberately unstable), which would leak into the edge's
// otherwise compact and stable output.
func appendProtojson(b []byte, m protoreflect.Message) ([]byte, error) {
	start := len(b)
	b, err := encodeOptions.MarshalAppend(b, m.Interface())
	if err != nil || len(b) == start || b[start] != '{' && b[start] != '[' {
		return b, err // a string or scalar has no insignificant space
	}
	var compact bytes.Buffer
	compact.Grow(len(b) - start)
	if err := json.Compact(&compact, b[start:]); err != nil {
		return b, err
	}
	return append(b[:start], compact.Bytes()...), nil
}

const timestampName protoreflect.FullName = "google.protobuf.Timestamp"

// The range protojson writes a Timestamp in: 0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59Z.
const (
	minTimestampSeconds = -62135596800
	maxTimestampSeconds = 253402300799
)

// appendTimestamp appends a Timestamp as protojson writes it (RFC 3339 in
// UTC with 0, 3, 6 or 9 fractional digits, and a Z), without protojson's
// encoder and the compaction its output needs: the response of every
// resource with a create or update time holds one. Out of protojson's
// range it hands over to protojson, for its error.
func appendTimestamp(b []byte, m protoreflect.Message) ([]byte, error) {
	fds := m.Descriptor().Fields()
	secs, nanos := m.Get(fds.ByNumber(1)).Int(), m.Get(fds.ByNumber(2)).Int()
	if secs < minTimestampSeconds || secs > maxTimestampSeconds || nanos < 0 || nanos > 999_999_999 {
		return appendProtojson(b, m)
	}
	b = append(b, '"')
	start := len(b)
	b = time.Unix(secs, nanos).UTC().AppendFormat(b, "2006-01-02T15:04:05.000000000")
	b = trimSuffix(b, start, "000")
	b = trimSuffix(b, start, "000")
	b = trimSuffix(b, start, ".000")
	return append(b, 'Z', '"'), nil
}

// trimSuffix cuts suffix off b when b[start:] ends with it.
func trimSuffix(b []byte, start int, suffix string) []byte {
	if len(b)-start >= len(suffix) && string(b[len(b)-len(suffix):]) == suffix {
		return b[:len(b)-len(suffix)]
	}
	return b
}

func appendList(b []byte, l protoreflect.List, fd protoreflect.FieldDescriptor) ([]byte, error) {
	b = append(b, '[')
	for i := 0; i < l.Len(); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendSingular(b, l.Get(i), fd); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

func appendMap(b []byte, mp protoreflect.Map, fd protoreflect.FieldDescriptor) ([]byte, error) {
	keys := make([]protoreflect.MapKey, 0, mp.Len())
	mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	slices.SortFunc(keys, compareKeys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendString(b, k.String()); err != nil {
			return b, err
		}
		b = append(b, ':')
		if b, err = appendSingular(b, mp.Get(k), fd.MapValue()); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// compareKeys orders map keys as protojson does: false before true,
// numbers by value, strings by bytes.
func compareKeys(x, y protoreflect.MapKey) int {
	switch xv := x.Interface().(type) {
	case bool:
		return compareBool(xv, y.Bool())
	case int32, int64:
		return cmpInt(x.Int(), y.Int())
	case uint32, uint64:
		return cmpInt(x.Uint(), y.Uint())
	}
	return cmpInt(x.String(), y.String())
}

func compareBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	}
	return 1
}

func cmpInt[T int64 | uint64 | string](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func appendSingular(b []byte, v protoreflect.Value, fd protoreflect.FieldDescriptor) ([]byte, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return strconv.AppendBool(b, v.Bool()), nil
	case protoreflect.StringKind:
		return appendString(b, v.String())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		b = append(b, '"')
		return append(strconv.AppendInt(b, v.Int(), 10), '"'), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		b = append(b, '"')
		return append(strconv.AppendUint(b, v.Uint(), 10), '"'), nil
	case protoreflect.FloatKind:
		return appendFloat(b, v.Float(), 32), nil
	case protoreflect.DoubleKind:
		return appendFloat(b, v.Float(), 64), nil
	case protoreflect.BytesKind:
		b = append(b, '"')
		return append(base64.StdEncoding.AppendEncode(b, v.Bytes()), '"'), nil
	case protoreflect.EnumKind:
		return appendEnum(b, v.Enum(), fd.Enum()), nil
	}
	return appendMessage(b, v.Message())
}

// appendEnum writes an enum value by its JSON name (short when the enum
// is renamed), a number unknown to the descriptor as a number, and
// google.protobuf.NullValue as null, as protojson does.
func appendEnum(b []byte, n protoreflect.EnumNumber, ed protoreflect.EnumDescriptor) []byte {
	if ed.FullName() == "google.protobuf.NullValue" {
		return append(b, "null"...)
	}
	vd := ed.Values().ByNumber(n)
	if vd == nil {
		return strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, '"')
	name := string(vd.Name())
	if p, ok := Prefix(ed); ok {
		name = name[len(p):]
	}
	return append(append(b, name...), '"')
}

// appendString writes s as protojson does: only '"', '\\' and control
// characters escaped; invalid UTF-8 is an error.
func appendString(b []byte, s string) ([]byte, error) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= ' ' && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return b, errInvalidUTF8
			}
			i += n
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, '\\')
		switch c {
		case '"', '\\':
			b = append(b, c)
		case '\b':
			b = append(b, 'b')
		case '\f':
			b = append(b, 'f')
		case '\n':
			b = append(b, 'n')
		case '\r':
			b = append(b, 'r')
		case '\t':
			b = append(b, 't')
		default:
			b = append(b, 'u')
			b = append(b, "0000"[1+(bits.Len32(uint32(c))-1)/4:]...)
			b = strconv.AppendUint(b, uint64(c), 16)
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}

// appendFloat writes n as protojson does (encoding/json's number format;
// NaN and the infinities as strings).
func appendFloat(b []byte, n float64, bitSize int) []byte {
	switch {
	case math.IsNaN(n):
		return append(b, `"NaN"`...)
	case math.IsInf(n, +1):
		return append(b, `"Infinity"`...)
	case math.IsInf(n, -1):
		return append(b, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(n); abs != 0 {
		if bitSize == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, n, format, -1, bitSize)
	if format == 'e' {
		if k := len(b); k >= 4 && b[k-4] == 'e' && b[k-3] == '-' && b[k-2] == '0' {
			b[k-2] = b[k-1]
			b = b[:k-1]
		}
	}
	return b
}
