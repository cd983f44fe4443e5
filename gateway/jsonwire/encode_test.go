package jsonwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// oracle is what the edge wrote before the encoder, byte for byte:
// protojson's output with EmitUnpopulated, compacted (protojson adds
// random spaces), with renamed enum values shortened where the descriptor
// says a value is an enum. Field order and string escaping are protojson's.
func oracle(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		t.Fatalf("protojson: %v", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		t.Fatalf("protojson wrote %s, not JSON: %v", b, err)
	}
	return shortenBytes(t, m.ProtoReflect().Descriptor(), compact.Bytes())
}

// shortenBytes replaces each enum value of md's JSON form in data by its
// short name. An enum name is an identifier, so its JSON form is the name
// in quotes, with nothing to escape.
func shortenBytes(t testing.TB, md protoreflect.MessageDescriptor, data []byte) []byte {
	t.Helper()
	s := &shortener{dec: json.NewDecoder(bytes.NewReader(data))}
	s.dec.UseNumber()
	if err := s.message(md, s.token()); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	out := make([]byte, 0, len(data))
	last := 0
	for _, r := range s.repl {
		out = append(out, data[last:r.start]...)
		out = append(out, r.text...)
		last = r.end
	}
	return append(out, data[last:]...)
}

type shortener struct {
	dec  *json.Decoder
	repl []struct {
		start, end int
		text       string
	}
	err error
}

func (s *shortener) token() json.Token {
	tok, err := s.dec.Token()
	if err != nil && s.err == nil {
		s.err = err
	}
	return tok
}

// message walks one value of md whose first token is tok.
func (s *shortener) message(md protoreflect.MessageDescriptor, tok json.Token) error {
	if _, wkt := wellKnown[md.FullName()]; wkt || tok != json.Delim('{') {
		s.skip(tok)
		return s.err
	}
	for s.dec.More() {
		key, _ := s.token().(string)
		fd := md.Fields().ByJSONName(key)
		if fd == nil {
			return fmt.Errorf("protojson wrote an unknown field %q of %s", key, md.FullName())
		}
		s.field(fd, s.token())
	}
	s.token() // '}'
	return s.err
}

func (s *shortener) field(fd protoreflect.FieldDescriptor, tok json.Token) {
	switch {
	case fd.IsMap() && tok == json.Delim('{'):
		for s.dec.More() {
			s.token() // key
			s.elem(fd.MapValue(), s.token())
		}
		s.token()
	case fd.IsList() && tok == json.Delim('['):
		for s.dec.More() {
			s.elem(fd, s.token())
		}
		s.token()
	default:
		s.elem(fd, tok)
	}
}

func (s *shortener) elem(fd protoreflect.FieldDescriptor, tok json.Token) {
	switch {
	case fd.Enum() != nil:
		if name, ok := tok.(string); ok {
			if short := Short(fd.Enum(), name); short != name {
				end := int(s.dec.InputOffset())
				s.repl = append(s.repl, struct {
					start, end int
					text       string
				}{end - len(name) - 2, end, strconv.Quote(short)})
			}
		}
	case fd.Message() != nil:
		_ = s.message(fd.Message(), tok)
	default:
		s.skip(tok)
	}
}

// skip consumes the rest of the value whose first token is tok.
func (s *shortener) skip(tok json.Token) {
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return
	}
	for depth := 1; depth > 0 && s.err == nil; {
		switch s.token() {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

func checkEncoding(t testing.TB, m proto.Message) {
	t.Helper()
	got, err := NewMarshaler().Marshal(m)
	if err != nil {
		t.Fatalf("Marshal(%v) = %v", m, err)
	}
	if want := oracle(t, m); !bytes.Equal(got, want) {
		t.Fatalf("Marshal(%v) differs from protojson with short enum names:\n got %s\nwant %s", m, got, want)
	}
}

func fullOrder() *orderv1.Order {
	return &orderv1.Order{
		Id: "ord-1", Customer: "al\"ice\\ \u2028 <b>&\x01\t\n", Status: orderv1.Order_STATUS_CONFIRMED,
		Lines: []*orderv1.OrderLine{
			{Sku: "k", Quantity: math.MaxInt32, UnitPrice: &typev1.Money{AmountMinor: math.MinInt64, Currency: "USD"}},
			{Sku: "é日本", Quantity: -1},
		},
		Total:      &typev1.Money{AmountMinor: math.MaxInt64, Currency: "EUR"},
		CreateTime: timestamppb.New(timestamppb.Now().AsTime()),
	}
}

// TestMarshalMatchesProtojson: the encoder writes what protojson writes,
// but for short enum names.
func TestMarshalMatchesProtojson(t *testing.T) {
	tests := []struct {
		name string
		msg  proto.Message
	}{
		{"empty order", &orderv1.Order{}},
		{"nil order", (*orderv1.Order)(nil)},
		{"full order", fullOrder()},
		{"unknown enum number", &orderv1.Order{Status: 42}},
		{"list", &orderv1.ListOrdersResponse{Orders: []*orderv1.Order{fullOrder(), {}}, NextPageToken: "n"}},
		{"reservation", &inventoryv1.Reservation{Id: "r", State: inventoryv1.Reservation_STATE_ACTIVE}},
		{"payment", &paymentv1.Payment{Id: "p", Status: paymentv1.Payment_STATUS_CAPTURED}},
		{"item", &inventoryv1.Item{Sku: "a", Available: 3}},
		{"map", &errdetails.ErrorInfo{Reason: "R", Metadata: map[string]string{"b": "2", "a": "1", "": "0"}}},
		{"struct", &structpb.Struct{Fields: map[string]*structpb.Value{"x": structpb.NewNullValue(), "y": structpb.NewNumberValue(1.5)}}},
		{"wrapper", wrapperspb.Double(math.Inf(1))},
		{"bad request", &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "f", Description: "d"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkEncoding(t, tt.msg) })
	}
}

func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, 1.5, 1e-7, 1e21, 123456789e20, math.NaN(), math.Inf(-1), math.SmallestNonzeroFloat64, math.MaxFloat64} {
		for _, bits := range []int{32, 64} {
			want, _ := protojson.Marshal(wrapperspb.Double(f))
			if bits == 32 {
				want, _ = protojson.Marshal(wrapperspb.Float(float32(f)))
				f = float64(float32(f))
			}
			if got := appendFloat(nil, f, bits); string(got) != strings.ReplaceAll(string(want), " ", "") {
				t.Errorf("appendFloat(%v, %d) = %s, protojson %s", f, bits, got, want)
			}
		}
	}
}

// FuzzMarshal: for any Order or list page the wire can carry, the encoder
// agrees with protojson but for short enum names, or both refuse it.
func FuzzMarshal(f *testing.F) {
	for _, m := range []proto.Message{fullOrder(), &orderv1.ListOrdersResponse{Orders: []*orderv1.Order{fullOrder()}}} {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, m := range []proto.Message{&orderv1.Order{}, &orderv1.ListOrdersResponse{}, &inventoryv1.Reservation{}} {
			if proto.Unmarshal(data, m) != nil {
				continue
			}
			_, perr := protojson.Marshal(m)
			_, err := NewMarshaler().Marshal(m)
			if (perr == nil) != (err == nil) {
				t.Fatalf("protojson error %v, encoder error %v", perr, err)
			}
			if err == nil {
				checkEncoding(t, m)
			}
		}
	})
}

// FuzzTimestamp: a Timestamp is written as protojson writes it, at the
// edges of its range and its fractional digits too, or both refuse it.
func FuzzTimestamp(f *testing.F) {
	for _, s := range []struct {
		secs  int64
		nanos int32
	}{{0, 0}, {1764512545, 123456789}, {1764512545, 120000000}, {1764512545, 123000}, {1764512545, 1},
		{-62135596800, 0}, {253402300799, 999999999}, {253402300799, 1e9}, {-62135596801, 0}, {0, -1}, {0, 1e9 + 1}} {
		f.Add(s.secs, s.nanos)
	}
	f.Fuzz(func(t *testing.T, secs int64, nanos int32) {
		m := (&timestamppb.Timestamp{Seconds: secs, Nanos: nanos}).ProtoReflect()
		want, werr := appendProtojson(nil, m)
		got, err := appendTimestamp(nil, m)
		if (werr == nil) != (err == nil) || err == nil && string(got) != string(want) {
			t.Errorf("appendTimestamp(%d, %d) = %s, %v; protojson %s, %v", secs, nanos, got, err, want, werr)
		}
	})
}
