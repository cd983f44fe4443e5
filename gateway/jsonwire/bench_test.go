package jsonwire

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// orderBodies are the JSON path's benchmark inputs: a one-line order and
// one of about 2 KB.
var orderBodies = []struct {
	name                string
	reqLines, respLines int
}{
	{"small", 1, 1},
	{"2KB", 49, 20},
}

func orderRequestBody(lines int) []byte {
	parts := make([]string, lines)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"sku":"keyboard-mech-%03d","quantity":%d}`, i, i%9+1)
	}
	return []byte(`{"lines":[` + strings.Join(parts, ",") + `],"paymentMethod":"pm_card_ok"}`)
}

// orderResponse is an Order as the order service returns it: confirmed,
// paid, with its create and update times (well-known types, which the
// encoder hands to protojson).
func orderResponse(lines int) *orderv1.Order {
	created := time.Date(2026, 11, 30, 14, 22, 25, 123456789, time.UTC)
	o := &orderv1.Order{Id: "ord-0123456789abcdef", Customer: "alice", Status: orderv1.Order_STATUS_CONFIRMED,
		Total: &typev1.Money{AmountMinor: 4999 * int64(lines), Currency: "USD"}, ReservationId: "res-0123456789abcdef",
		PaymentId: "pay-0123456789abcdef", PaymentMethod: "pm_card_ok",
		CreateTime: timestamppb.New(created), UpdateTime: timestamppb.New(created.Add(187 * time.Millisecond))}
	for i := range lines {
		o.Lines = append(o.Lines, &orderv1.OrderLine{Sku: fmt.Sprintf("kbd-%03d", i), Quantity: int32(i%9 + 1),
			UnitPrice: &typev1.Money{AmountMinor: 4999, Currency: "USD"}})
	}
	return o
}

// BenchmarkDecodeOrder is the edge's request path for a CreateOrder body:
// everything from the raw bytes to the request message grpc-gateway
// forwards. (Before the one-parse decoder, this loop also ran Check, as
// the edge did before handing the body to grpc-gateway.)
func BenchmarkDecodeOrder(b *testing.B) {
	m := NewMarshaler()
	for _, c := range orderBodies {
		body := orderRequestBody(c.reqLines)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var req orderv1.CreateOrderRequest
				if err := m.NewDecoder(bytes.NewReader(body)).Decode(&req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodeOrder is the edge's response path for an Order: the
// message to the bytes written.
func BenchmarkEncodeOrder(b *testing.B) {
	m := NewMarshaler()
	for _, c := range orderBodies {
		o := orderResponse(c.respLines)
		b.Run(c.name, func(b *testing.B) {
			out, err := m.Marshal(o)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Marshal(o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheck is the walk that explains a rejected body.
func BenchmarkCheck(b *testing.B) {
	body := []byte(`{"lines":[{"sku":"keyboard-001","quantity":2},{"sku":"mouse-001","quantity":1}],"paymentMethod":"pm_card_ok"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Check(createOrder, body); err != nil {
			b.Fatal(err)
		}
	}
}
