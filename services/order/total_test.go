package order

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/services/payment"
)

// The saga's limit is the payment service's, mirrored to keep the packages
// apart.
func TestChargeLimitMatchesPayment(t *testing.T) {
	if maxChargeMinor != payment.MaxAmountMinor {
		t.Errorf("maxChargeMinor = %d, want payment.MaxAmountMinor %d", int64(maxChargeMinor), int64(payment.MaxAmountMinor))
	}
}

func TestCheckedArithmetic(t *testing.T) {
	tests := []struct {
		name   string
		fn     func(a, b int64) (int64, bool)
		a, b   int64
		want   int64
		wantOK bool
	}{
		{"mul small", mulMinor, 1000, 4999, 4_999_000, true},
		{"mul by zero", mulMinor, 0, math.MaxInt64, 0, true},
		{"mul zero price", mulMinor, 3, 0, 0, true},
		{"mul at the edge", mulMinor, 1, math.MaxInt64, math.MaxInt64, true},
		{"mul max price twice", mulMinor, 2, math.MaxInt64, 0, false},
		{"mul just over", mulMinor, 2, math.MaxInt64/2 + 1, 0, false},
		{"mul negative", mulMinor, 2, -1, 0, false},
		{"add small", addMinor, 1, 2, 3, true},
		{"add at the edge", addMinor, math.MaxInt64 - 1, 1, math.MaxInt64, true},
		{"add over", addMinor, math.MaxInt64, 1, 0, false},
		{"add negative", addMinor, -1, 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := tt.fn(tt.a, tt.b); got != tt.want || ok != tt.wantOK {
				t.Errorf("(%d, %d) = %d, %v; want %d, %v", tt.a, tt.b, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestWithReservation(t *testing.T) {
	money := func(minor int64, cur string) *typev1.Money { return &typev1.Money{AmountMinor: minor, Currency: cur} }
	line := func(sku string, q int32, price *typev1.Money) *inventoryv1.ReservedLine {
		return &inventoryv1.ReservedLine{Sku: sku, Quantity: q, UnitPrice: price}
	}
	tests := []struct {
		name      string
		order     []any // sku, quantity, ...
		lines     []*inventoryv1.ReservedLine
		wantTotal *typev1.Money
		wantCause string
	}{
		{name: "two lines", order: []any{"a", 2, "b", 1},
			lines:     []*inventoryv1.ReservedLine{line("a", 2, money(4999, "USD")), line("b", 1, money(2499, "USD"))},
			wantTotal: money(2*4999+2499, "USD")},
		{name: "exactly the payment limit", order: []any{"a", 1000},
			lines:     []*inventoryv1.ReservedLine{line("a", 1000, money(1_000_000_000_000, "USD"))},
			wantTotal: money(maxChargeMinor, "USD")},
		{name: "one above the payment limit", order: []any{"a", 1000, "b", 1},
			lines:     []*inventoryv1.ReservedLine{line("a", 1000, money(1_000_000_000_000, "USD")), line("b", 1, money(1, "USD"))},
			wantCause: causeAboveLimit},
		{name: "max price twice overflows", order: []any{"a", 2},
			lines: []*inventoryv1.ReservedLine{line("a", 2, money(math.MaxInt64, "USD"))}, wantCause: causeOverflow},
		{name: "sum overflows", order: []any{"a", 1, "b", 1},
			lines:     []*inventoryv1.ReservedLine{line("a", 1, money(math.MaxInt64, "USD")), line("b", 1, money(1, "USD"))},
			wantCause: causeOverflow},
		{name: "mixed currencies", order: []any{"a", 1, "b", 1},
			lines:     []*inventoryv1.ReservedLine{line("a", 1, money(1, "USD")), line("b", 1, money(1, "EUR"))},
			wantCause: causeMixedCurrencies},
		{name: "zero total", order: []any{"a", 5},
			lines: []*inventoryv1.ReservedLine{line("a", 5, money(0, "USD"))}, wantCause: causeZeroTotal},
		{name: "no lines", order: []any{"a", 1}, wantCause: causeZeroTotal},
		{name: "negative price", order: []any{"a", 1},
			lines: []*inventoryv1.ReservedLine{line("a", 1, money(-5, "USD"))}, wantCause: causeBadLine},
		{name: "zero quantity", order: []any{"a", 1},
			lines: []*inventoryv1.ReservedLine{line("a", 0, money(5, "USD"))}, wantCause: causeBadLine},
		{name: "an order line without a price", order: []any{"a", 1, "b", 1},
			lines: []*inventoryv1.ReservedLine{line("a", 1, money(5, "USD"))}, wantCause: causeUnpricedLine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &Record{Order: &orderv1.Order{Id: "ord-1", Lines: orderReq("pm_card_ok", tt.order...).GetLines()}}
			next, err := withReservation(rec, &inventoryv1.Reservation{Id: "res-1", Lines: tt.lines})
			var te *totalError
			if tt.wantCause != "" {
				if !errors.As(err, &te) || te.cause != tt.wantCause {
					t.Fatalf("withReservation() error = %v, want cause %s", err, tt.wantCause)
				}
				return
			}
			if err != nil {
				t.Fatalf("withReservation() error = %v", err)
			}
			if d := cmp.Diff(tt.wantTotal, next.Order.GetTotal(), protocmp.Transform()); d != "" {
				t.Errorf("total (-want +got):\n%s", d)
			}
			if next.Order.GetReservationId() != "res-1" {
				t.Errorf("reservation id = %q, want res-1", next.Order.GetReservationId())
			}
			if rec.Order.GetTotal() != nil {
				t.Errorf("withReservation changed its input: %v", rec.Order)
			}
		})
	}
}
