package jsonwire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// TestUnmarshal: one parse for what protojson takes, and on anything else
// the walker's error, with its field path and the syntax/shape split.
func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		msg        proto.Message
		want       proto.Message // nil: an error
		wantField  string
		wantSyntax bool
	}{
		{"order", `{"lines":[{"sku":"k","quantity":2}],"paymentMethod":"pm"}`, &orderv1.CreateOrderRequest{},
			&orderv1.CreateOrderRequest{Lines: []*orderv1.OrderLine{{Sku: "k", Quantity: 2}}, PaymentMethod: "pm"}, "", false},
		{"short enum name", `{"status":"CONFIRMED"}`, &orderv1.Order{}, &orderv1.Order{Status: orderv1.Order_STATUS_CONFIRMED}, "", false},
		{"full enum name", `{"status":"STATUS_FAILED"}`, &orderv1.Order{}, nil, "status", false},
		{"enum number", `{"status":4}`, &orderv1.Order{}, nil, "status", false},
		{"proto name", `{"payment_method":"pm"}`, &orderv1.CreateOrderRequest{}, nil, "payment_method", false},
		{"int32 as string", `{"lines":[{"quantity":"2"}]}`, &orderv1.CreateOrderRequest{}, nil, "lines[0].quantity", false},
		{"null scalar", `{"paymentMethod":null}`, &orderv1.CreateOrderRequest{}, nil, "paymentMethod", false},
		{"escaped key", `{"payment\u005fmethod":"pm"}`, &orderv1.CreateOrderRequest{}, nil, "payment_method", false},
		{"int32 after a string value that looks like a key", `{"paymentMethod":"quantity","lines":[{"quantity":2}]}`, &orderv1.CreateOrderRequest{},
			&orderv1.CreateOrderRequest{Lines: []*orderv1.OrderLine{{Quantity: 2}}, PaymentMethod: "quantity"}, "", false},
		{"fraction", `{"lines":[{"quantity":1.5}]}`, &orderv1.CreateOrderRequest{}, nil, "lines[0].quantity", false},
		// protojson takes these 64-bit spellings; the published pattern does not.
		{"int64 exponent", `{"available":"1e2"}`, &inventoryv1.Item{}, nil, "available", false},
		{"int64 fraction", `{"available":"89.0"}`, &inventoryv1.Item{}, nil, "available", false},
		{"int64 minus zero", `{"available":"-0"}`, &inventoryv1.Item{}, nil, "available", false},
		{"int64 nested exponent", `{"unitPrice":{"amountMinor":"1.5e3"}}`, &inventoryv1.Item{}, nil, "unitPrice.amountMinor", false},
		{"unknown field", `{"lines":[{"colour":"red"}]}`, &orderv1.CreateOrderRequest{}, nil, "lines[0].colour", false},
		{"unknown enum name", `{"status":"SHIPPED"}`, &orderv1.Order{}, nil, "status", false},
		{"duplicate key", `{"paymentMethod":"a","paymentMethod":"b"}`, &orderv1.CreateOrderRequest{}, nil, "paymentMethod", true},
		{"malformed", `{"lines":[}`, &orderv1.CreateOrderRequest{}, nil, "", true},
		{"invalid UTF-8", "{\"paymentMethod\":\"\xff\"}", &orderv1.CreateOrderRequest{}, nil, "paymentMethod", true},
		{"too deep for the scan", `{"lines":[{"unitPrice":` + strings.Repeat(`[`, 65) + strings.Repeat(`]`, 65) + `}]}`, &orderv1.CreateOrderRequest{}, nil, "lines[0].unitPrice" + strings.Repeat("[0]", 61), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Unmarshal([]byte(tt.body), tt.msg)
			if tt.want != nil {
				if err != nil || !proto.Equal(tt.msg, tt.want) {
					t.Fatalf("Unmarshal = %v, %v; want %v", tt.msg, err, tt.want)
				}
				return
			}
			var je *Error
			if !errors.As(err, &je) || je.Field != tt.wantField || je.Syntax != tt.wantSyntax {
				t.Fatalf("Unmarshal error = %#v, want field %q syntax %v", err, tt.wantField, tt.wantSyntax)
			}
		})
	}
}

func TestDecoder(t *testing.T) {
	m := NewMarshaler()
	var req orderv1.CreateOrderRequest
	if err := m.NewDecoder(bytes.NewReader(nil)).Decode(&req); !errors.Is(err, io.EOF) {
		t.Errorf("Decode(empty) = %v, want io.EOF (no body)", err)
	}
	if err := m.NewDecoder(strings.NewReader(`{"paymentMethod":"pm"}`)).Decode(&req); err != nil || req.GetPaymentMethod() != "pm" {
		t.Errorf("Decode = %v, %v", &req, err)
	}
	var plain map[string]int
	if err := m.NewDecoder(strings.NewReader(`{"a":1}`)).Decode(&plain); err != nil || plain["a"] != 1 {
		t.Errorf("Decode(non-proto) = %v, %v", plain, err)
	}
}

// TestDecoderBodyField: a route with body: "item" decodes into a field,
// a pointer to a message pointer, which must get the same one-parse
// Unmarshal as a whole request (no trailing data, short enum names,
// the walker's errors with paths relative to the field's message).
func TestDecoderBodyField(t *testing.T) {
	m := NewMarshaler()
	tests := []struct {
		name       string
		body       string
		want       *orderv1.Order // nil: an error, or no body
		wantErr    bool
		wantField  string
		wantSyntax bool
	}{
		{name: "no body", body: ""},
		{name: "message", body: `{"id":"o-1"}`, want: &orderv1.Order{Id: "o-1"}},
		{name: "short enum name", body: `{"status":"CONFIRMED"}`, want: &orderv1.Order{Status: orderv1.Order_STATUS_CONFIRMED}},
		{name: "trailing json", body: `{"id":"o-1"} {"id":"o-2"}`, wantErr: true, wantSyntax: true},
		{name: "duplicate key", body: `{"id":"a","id":"b"}`, wantErr: true, wantField: "id", wantSyntax: true},
		{name: "unknown field", body: `{"lines":[{"colour":"red"}]}`, wantErr: true, wantField: "lines[0].colour"},
		{name: "too deep", body: strings.Repeat(`[`, MaxDepth+1) + strings.Repeat(`]`, MaxDepth+1), wantErr: true, wantField: strings.Repeat("[0]", MaxDepth), wantSyntax: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, via := range []string{"NewDecoder", "Unmarshal"} {
				var field *orderv1.Order
				var err error
				if via == "NewDecoder" {
					err = m.NewDecoder(strings.NewReader(tt.body)).Decode(&field)
				} else if tt.body != "" {
					err = m.Unmarshal([]byte(tt.body), &field)
				}
				switch {
				case tt.wantErr:
					var je *Error
					if !errors.As(err, &je) || je.Field != tt.wantField || je.Syntax != tt.wantSyntax {
						t.Errorf("%s error = %#v, want field %q syntax %v", via, err, tt.wantField, tt.wantSyntax)
					}
				case tt.want == nil:
					if field != nil || (via == "NewDecoder" && !errors.Is(err, io.EOF)) {
						t.Errorf("%s(empty) = %v, %v; want nil, io.EOF", via, field, err)
					}
				case err != nil || !proto.Equal(field, tt.want):
					t.Errorf("%s = %v, %v; want %v", via, field, err, tt.want)
				}
			}
		})
	}
}

func TestDepthWithin(t *testing.T) {
	tests := []struct {
		data string
		max  int
		want bool
	}{
		{`[[]]`, 2, true},
		{`[[[]]]`, 2, false},
		{`{"a":"[[[[\"[["}`, 1, true},
		{`{"a\\":[[1]]}`, 2, false},
	}
	for _, tt := range tests {
		if got := depthWithin([]byte(tt.data), tt.max); got != tt.want {
			t.Errorf("depthWithin(%s, %d) = %v, want %v", tt.data, tt.max, got, tt.want)
		}
	}
}
