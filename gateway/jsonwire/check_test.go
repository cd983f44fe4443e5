package jsonwire

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

var (
	createOrder = (&orderv1.CreateOrderRequest{}).ProtoReflect().Descriptor()
	order       = (&orderv1.Order{}).ProtoReflect().Descriptor()
	item        = (&inventoryv1.Item{}).ProtoReflect().Descriptor()
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name       string
		md         protoreflect.MessageDescriptor
		body       string
		wantField  string
		wantMsg    string // substring; "" means the body is accepted
		wantSyntax bool
	}{
		{"valid order", createOrder, `{"lines":[{"sku":"keyboard-001","quantity":2}],"paymentMethod":"pm_card_ok"}`, "", "", false},
		{"proto name", createOrder, `{"payment_method":"pm"}`, "payment_method", `unknown field; this API spells it "paymentMethod"`, false},
		{"null list", createOrder, `{"lines":null}`, "lines", "null is not a value of this field", false},
		{"null string", createOrder, `{"paymentMethod":null}`, "paymentMethod", "null is not a value of this field", false},
		{"null message", item, `{"unitPrice":null}`, "", "", false},
		{"integral exponent", createOrder, `{"lines":[{"quantity":1e2}]}`, "", "", false},
		{"int32 as string", createOrder, `{"lines":[{"quantity":"7"}]}`, "lines[0].quantity", "as a JSON number, not a string", false},
		{"int64 as number", item, `{"available":7}`, "available", `want a JSON string holding the integer (int64)`, false},
		{"empty object", createOrder, `{}`, "", "", false},
		{"int64 as string", item, `{"available":"9223372036854775807"}`, "", "", false},
		{"int64 negative", item, `{"available":"-5"}`, "", "", false},
		{"int64 zero", item, `{"available":"0"}`, "", "", false},
		{"int64 exponent", item, `{"available":"1e2"}`, "available", "plain decimal digits", false},
		{"int64 fraction", item, `{"available":"5.0"}`, "available", "plain decimal digits", false},
		{"int64 exponent with fraction", item, `{"available":"2.50e1"}`, "available", "plain decimal digits", false},
		{"int64 minus zero", item, `{"available":"-0"}`, "available", "plain decimal digits", false},
		{"int64 nested exponent", item, `{"unitPrice":{"amountMinor":"1E3"}}`, "unitPrice.amountMinor", "plain decimal digits", false},
		{"timestamp", item, `{"updateTime":"2026-01-02T15:04:05.5Z"}`, "", "", false},
		{"malformed", createOrder, `{"lines":[}`, "", "malformed JSON", true},
		{"truncated", createOrder, `{"lines":[`, "", "unexpected end", true},
		{"trailing data", createOrder, `{} {}`, "", "after the JSON value", true},
		{"not an object", createOrder, `[1]`, "", "want a JSON object", false},
		{"invalid UTF-8", createOrder, "{\"paymentMethod\":\"\xff\"}", "paymentMethod", "not valid UTF-8", true},
		{"duplicate key", createOrder, `{"paymentMethod":"a","paymentMethod":"b"}`, "paymentMethod", "duplicate key", true},
		{"duplicate nested key", createOrder, `{"lines":[{"sku":"a","sku":"b"}]}`, "lines[0].sku", "duplicate key", true},
		{"json and proto name", createOrder, `{"paymentMethod":"a","payment_method":"b"}`, "payment_method", "unknown field", false},
		{"unknown field", createOrder, `{"lines":[{"sku":"a","qty":1}]}`, "lines[0].qty", "unknown field", false},
		{"wrong type string", createOrder, `{"paymentMethod":5}`, "paymentMethod", "want a string", false},
		{"wrong type int", createOrder, `{"lines":[{"quantity":"two"}]}`, "lines[0].quantity", "want an integer", false},
		{"fraction", createOrder, `{"lines":[{"quantity":1.5}]}`, "lines[0].quantity", "fraction", false},
		{"int32 overflow", createOrder, `{"lines":[{"quantity":2147483648}]}`, "lines[0].quantity", "out of range", false},
		{"int32 underflow", createOrder, `{"lines":[{"quantity":-2147483649}]}`, "lines[0].quantity", "out of range", false},
		{"huge exponent", createOrder, `{"lines":[{"quantity":1e999999999999}]}`, "lines[0].quantity", "out of range", false},
		{"list wanted", createOrder, `{"lines":{"sku":"a"}}`, "lines", "want a JSON array", false},
		{"null in list", createOrder, `{"lines":[null]}`, "lines[0]", "null is not allowed", false},
		{"bad timestamp", item, `{"updateTime":"yesterday"}`, "updateTime", "RFC 3339", false},
		{"too deep", createOrder, `{"lines":[{"unitPrice":` + strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70) + `}]}`, "lines[0].unitPrice" + strings.Repeat("[0]", 61), "nested deeper than 64", true},
		{"malformed after a shape error", createOrder, `[`, "", "unexpected end", true},
		{"duplicate after an unknown field", createOrder, `{"a":1,"a":2}`, "a", "duplicate key", true},
		{"enum short name", order, `{"status":"CONFIRMED"}`, "", "", false},
		{"enum full name", order, `{"status":"STATUS_CONFIRMED"}`, "status", "want one of UNSPECIFIED", false},
		{"enum number", order, `{"status":2}`, "status", "want one of UNSPECIFIED", false},
		{"enum unknown", order, `{"status":"SHIPPED"}`, "status", "want one of UNSPECIFIED, PENDING", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Check(tt.md, []byte(tt.body))
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want nil", tt.body, err)
				}
				if err := protojson.Unmarshal(out, NewMessage(tt.md)); err != nil {
					t.Errorf("protojson rejects Check's output %s: %v", out, err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("Check(%s) = %v, want *Error", tt.body, err)
			}
			if e.Field != tt.wantField || !strings.Contains(e.Msg, tt.wantMsg) || e.Syntax != tt.wantSyntax {
				t.Errorf("Check(%s) = {%q %q syntax=%v}, want {%q %q syntax=%v}", tt.body, e.Field, e.Msg, e.Syntax, tt.wantField, tt.wantMsg, tt.wantSyntax)
			}
		})
	}
}

func TestCheckDepth(t *testing.T) {
	v := (&structpb.Value{}).ProtoReflect().Descriptor()
	body := strings.Repeat(`[`, MaxDepth+1) + strings.Repeat(`]`, MaxDepth+1)
	_, err := Check(v, []byte(body))
	if e, ok := err.(*Error); !ok || !e.Syntax || !strings.Contains(e.Msg, "nested") {
		t.Errorf("Check(%d nested arrays) = %v, want a nesting syntax error", MaxDepth+1, err)
	}
}

func TestCheckExpandsShortEnums(t *testing.T) {
	out, err := Check(order, []byte(`{"status":"CANCELLED"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), `{"status":"STATUS_CANCELLED"}`; got != want {
		t.Errorf("Check() = %s, want %s", got, want)
	}
}

func TestCheckWrappers(t *testing.T) {
	md := (&wrapperspb.Int32Value{}).ProtoReflect().Descriptor()
	if _, err := Check(md, []byte(`5`)); err != nil {
		t.Errorf("Check(Int32Value 5) = %v", err)
	}
	if _, err := Check(md, []byte(`"x"`)); err == nil {
		t.Errorf("Check(Int32Value \"x\") = nil, want error")
	}
	ts := (&timestamppb.Timestamp{}).ProtoReflect().Descriptor()
	if _, err := Check(ts, []byte(`"2026-01-02T03:04:05Z"`)); err != nil {
		t.Errorf("Check(Timestamp) = %v", err)
	}
}

func TestMarshalerShortensEnums(t *testing.T) {
	m := NewMarshaler()
	b, err := m.Marshal(&orderv1.Order{Id: "ord-1", Status: orderv1.Order_STATUS_CONFIRMED})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"status":"CONFIRMED"`, `"lines":[]`, `"failureReason":""`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Marshal(order) = %s, want it to contain %s", b, want)
		}
	}
	b, err = m.Marshal(&inventoryv1.Item{Sku: "a"})
	if err != nil || !strings.Contains(string(b), `"available"`) {
		t.Errorf("Marshal(item) = %s, %v; want available emitted", b, err)
	}
}

func TestFieldPath(t *testing.T) {
	tests := []struct {
		name, in, wantField, wantPointer string
	}{
		{"repeated", "lines[0].quantity", "lines[0].quantity", "#/lines/0/quantity"},
		{"json name", "payment_method", "paymentMethod", "#/paymentMethod"},
		{"nested", "lines[2].unit_price.amount_minor", "lines[2].unitPrice.amountMinor", "#/lines/2/unitPrice/amountMinor"},
		{"unknown", "no_such_field.x_y", "noSuchField.xY", "#/noSuchField/xY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, p := FieldPath(createOrder, tt.in)
			if f != tt.wantField || p != tt.wantPointer {
				t.Errorf("FieldPath(%q) = %q, %q; want %q, %q", tt.in, f, p, tt.wantField, tt.wantPointer)
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	p, ok := Prefix(orderv1.Order_STATUS_CONFIRMED.Descriptor())
	if !ok || p != "STATUS_" {
		t.Errorf("Prefix(Order.Status) = %q, %v; want STATUS_, true", p, ok)
	}
	if got := upperSnake("OrderStatus"); got != "ORDER_STATUS" {
		t.Errorf("upperSnake(OrderStatus) = %q", got)
	}
	if got := upperSnake("HTTPCode"); got != "HTTP_CODE" {
		t.Errorf("upperSnake(HTTPCode) = %q", got)
	}
}

// TestInvalidUTF8NamesField: invalid UTF-8 is reported at the field whose
// string holds it (INVALID_JSON still), not as the body as a whole, and
// before any shape error after it.
func TestInvalidUTF8NamesField(t *testing.T) {
	for _, tt := range []struct {
		name, body, field, msg string
	}{
		{"top-level field", "{\"paymentMethod\":\"pm\xff\"}", "paymentMethod", "not valid UTF-8"},
		{"nested field", "{\"lines\":[{\"sku\":\"a\"},{\"sku\":\"a\xc3\x28b\"}]}", "lines[1].sku", "not valid UTF-8"},
		{"member name", "{\"lines\":[{\"s\xffku\":\"a\"}]}", "lines[0]", "member name is not valid UTF-8"},
		{"before an unknown field", "{\"paymentMethod\":\"\xfe\",\"qty\":1}", "paymentMethod", "not valid UTF-8"},
		{"a top-level string", "\"\xff\"", "", "body is not valid UTF-8"},
		{"outside any string", "{\"lines\":[]}\xff", "", "after the JSON value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Check(createOrder, []byte(tt.body))
			var e *Error
			if !errors.As(err, &e) || e.Field != tt.field || !strings.Contains(e.Msg, tt.msg) || !e.Syntax {
				t.Fatalf("Check(%q) = %#v, want field %q, a syntax error saying %q", tt.body, err, tt.field, tt.msg)
			}
			m := &orderv1.CreateOrderRequest{}
			if err := Unmarshal([]byte(tt.body), m); !errors.As(err, &e) || e.Field != tt.field {
				t.Errorf("Unmarshal(%q) = %v, want field %q", tt.body, err, tt.field)
			}
		})
	}
}
