package jsonwire

import (
	"testing"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

func BenchmarkCheck(b *testing.B) {
	body := []byte(`{"lines":[{"sku":"keyboard-001","quantity":2},{"sku":"mouse-001","quantity":1}],"paymentMethod":"pm_card_ok"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Check(createOrder, body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalOrder(b *testing.B) {
	m := NewMarshaler()
	o := &orderv1.Order{Id: "ord-1", Status: orderv1.Order_STATUS_CONFIRMED, Lines: []*orderv1.OrderLine{
		{Sku: "keyboard-001", Quantity: 2, UnitPrice: &typev1.Money{AmountMinor: 4999, Currency: "USD"}},
	}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Marshal(o); err != nil {
			b.Fatal(err)
		}
	}
}
