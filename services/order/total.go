package order

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// maxChargeMinor is the largest amount the payment service charges
// (payment.MaxAmountMinor, 1e15 minor units). Inventory caps a unit price at
// 1e12, so one line of 1000 units fits, but an order of many such lines may
// not: a total above it fails the order (INVALID_TOTAL) before any charge.
const maxChargeMinor = 1_000_000_000_000_000

// Causes of an invalid total (ErrorInfo metadata "cause").
const (
	causeMixedCurrencies = "MIXED_CURRENCIES"
	causeUnpricedLine    = "UNPRICED_LINE"
	causeBadLine         = "BAD_LINE"
	causeOverflow        = "OVERFLOW"
	causeZeroTotal       = "ZERO_TOTAL"
	causeAboveLimit      = "ABOVE_PAYMENT_LIMIT"
)

// totalError says why a reservation's prices give no chargeable total. It
// is a definite failure: running the saga again computes the same thing.
type totalError struct {
	cause  string
	detail string
}

func (e *totalError) Error() string { return "order total: " + e.detail }

// withReservation returns rec with the reservation's id, each line's unit
// price and the total: the sum of quantity × unit price over the
// reservation's lines, in their one currency, computed with checked
// arithmetic. The error is a *totalError.
func withReservation(rec *Record, res *inventoryv1.Reservation) (*Record, error) {
	total, err := reservationTotal(res)
	if err != nil {
		return nil, err
	}
	prices := make(map[string]*typev1.Money, len(res.GetLines()))
	for _, l := range res.GetLines() {
		prices[l.GetSku()] = l.GetUnitPrice()
	}
	next := rec.clone()
	next.Order.ReservationId = res.GetId()
	next.Order.Total = total
	for _, l := range next.Order.GetLines() {
		p, ok := prices[l.GetSku()]
		if !ok {
			return nil, &totalError{causeUnpricedLine, fmt.Sprintf("reservation %s has no line for %s", res.GetId(), l.GetSku())}
		}
		l.UnitPrice = proto.Clone(p).(*typev1.Money)
	}
	return next, nil
}

// reservationTotal sums quantity × unit price over res's lines. The total
// must be in one currency and between 1 and maxChargeMinor.
func reservationTotal(res *inventoryv1.Reservation) (*typev1.Money, error) {
	total := &typev1.Money{}
	for i, l := range res.GetLines() {
		p := l.GetUnitPrice()
		if i == 0 {
			total.Currency = p.GetCurrency()
		} else if p.GetCurrency() != total.Currency {
			return nil, &totalError{causeMixedCurrencies,
				fmt.Sprintf("reservation %s mixes currencies %q and %q", res.GetId(), total.Currency, p.GetCurrency())}
		}
		if l.GetQuantity() < 1 || p.GetAmountMinor() < 0 {
			return nil, &totalError{causeBadLine,
				fmt.Sprintf("reservation %s line %s: %d units at %d", res.GetId(), l.GetSku(), l.GetQuantity(), p.GetAmountMinor())}
		}
		amount, ok := mulMinor(int64(l.GetQuantity()), p.GetAmountMinor())
		if ok {
			total.AmountMinor, ok = addMinor(total.AmountMinor, amount)
		}
		if !ok {
			return nil, &totalError{causeOverflow, fmt.Sprintf("reservation %s: the total overflows int64", res.GetId())}
		}
	}
	switch {
	case total.AmountMinor == 0:
		return nil, &totalError{causeZeroTotal, fmt.Sprintf("reservation %s totals zero", res.GetId())}
	case total.AmountMinor > maxChargeMinor:
		return nil, &totalError{causeAboveLimit,
			fmt.Sprintf("reservation %s totals %d, above the payment limit %d", res.GetId(), total.AmountMinor, int64(maxChargeMinor))}
	}
	return total, nil
}

// mulMinor returns a × b for non-negative a and b, and false on overflow.
func mulMinor(a, b int64) (int64, bool) {
	if a < 0 || b < 0 || a != 0 && b > math.MaxInt64/a {
		return 0, false
	}
	return a * b, true
}

// addMinor returns a + b for non-negative a and b, and false on overflow.
func addMinor(a, b int64) (int64, bool) {
	if a < 0 || b < 0 || a > math.MaxInt64-b {
		return 0, false
	}
	return a + b, true
}
