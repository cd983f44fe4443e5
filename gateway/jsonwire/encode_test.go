package jsonwire

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// oracle is what the edge wrote before the encoder: protojson's output
// with EmitUnpopulated, decoded, with renamed enum values shortened where
// the descriptor says a value is an enum.
func oracle(t testing.TB, m proto.Message) any {
	t.Helper()
	b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		t.Fatalf("protojson: %v", err)
	}
	v := decodeAny(t, b)
	shortenTree(m.ProtoReflect().Descriptor(), v)
	return v
}

func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s is not JSON: %v", b, err)
	}
	return v
}

func shortenTree(md protoreflect.MessageDescriptor, v any) {
	obj, ok := v.(map[string]any)
	if _, wkt := wellKnown[md.FullName()]; wkt || !ok {
		return
	}
	for i := 0; i < md.Fields().Len(); i++ {
		fd := md.Fields().Get(i)
		val, ok := obj[fd.JSONName()]
		if !ok {
			continue
		}
		elem := fd
		if fd.IsMap() {
			elem = fd.MapValue()
		}
		each := func(x any) any {
			switch {
			case elem.Enum() != nil:
				if s, ok := x.(string); ok {
					return Short(elem.Enum(), s)
				}
			case elem.Message() != nil:
				shortenTree(elem.Message(), x)
			}
			return x
		}
		switch c := val.(type) {
		case []any:
			for j := range c {
				c[j] = each(c[j])
			}
		case map[string]any:
			if fd.IsMap() {
				for k := range c {
					c[k] = each(c[k])
				}
			} else {
				each(c)
			}
		default:
			obj[fd.JSONName()] = each(val)
		}
	}
}

func checkEncoding(t testing.TB, m proto.Message) {
	t.Helper()
	got, err := NewMarshaler().Marshal(m)
	if err != nil {
		t.Fatalf("Marshal(%v) = %v", m, err)
	}
	if diff := cmp.Diff(oracle(t, m), decodeAny(t, got)); diff != "" {
		t.Fatalf("Marshal(%v) = %s, differs from protojson with short enum names (-want +got):\n%s", m, got, diff)
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
	for _, f := range []float64{0, -0.0, 1, 1.5, 1e-7, 1e21, 123456789e20, math.NaN(), math.Inf(-1), math.SmallestNonzeroFloat64, math.MaxFloat64} {
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
