package payment

import (
	"fmt"
	"regexp"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Request limits, from the proto contract.
const maxIDLen = 64

// MaxAmountMinor caps CreatePayment's amount.amount_minor: 1e15 minor units,
// 10 trillion in major units of a two-decimal currency. It sits above the
// largest unit price inventory accepts (1e12) times the most units of one
// order line (1000), but an order of many such lines can exceed it, so the
// order service checks its total against it before charging.
const MaxAmountMinor = 1_000_000_000_000_000

var (
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
	// idPattern is the alphabet of payment ids and order ids: the URL-safe
	// characters our ids use ("pay-<hex>", "ord-<hex>"), so an id is safe
	// to put into a message, a log line or a URL as it is.
	idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// checkID requires 1-64 characters of the id alphabet. Ids are checked
// before any lookup, so a NOT_FOUND never echoes more than 64 safe
// characters.
func checkID(v *rpcerr.Violations, field, id string) {
	if !idPattern.MatchString(id) {
		v.Add(field, fmt.Sprintf("must be 1-%d characters of [A-Za-z0-9_-]", maxIDLen))
	}
}

// validateCreate checks the request and its idempotency key. The ErrorInfo
// reason names the most basic problem: a missing key, then an unknown method.
func validateCreate(req *paymentv1.CreatePaymentRequest, key string) error {
	var v rpcerr.Violations
	reason, msg := "", ""
	checkID(&v, "order_id", req.GetOrderId())
	if m := req.GetAmount(); m == nil {
		v.Add("amount", "is required")
	} else {
		switch a := m.GetAmountMinor(); {
		case a < 1:
			v.Add("amount.amount_minor", "must be 1 or more")
		case a > MaxAmountMinor:
			v.Add("amount.amount_minor", fmt.Sprintf("must be at most %d (10 trillion in major units)", int64(MaxAmountMinor)))
		}
		if !currencyPattern.MatchString(m.GetCurrency()) {
			v.Add("amount.currency", "must be 3 upper-case letters (ISO 4217)")
		}
	}
	switch _, known := methods[req.GetPaymentMethod()]; {
	case req.GetPaymentMethod() == "":
		v.Add("payment_method", "is required")
	case !known:
		v.Add("payment_method", "must be pm_card_ok, pm_card_declined or pm_card_insufficient_funds")
		reason, msg = ReasonUnknownPaymentMethod, "unknown payment method "+req.GetPaymentMethod()
	}
	if !callmeta.ValidIdempotencyKey(key) {
		reason = ReasonIdempotencyKeyMissing
		msg = fmt.Sprintf("the %q metadata is required: 1-%d printable ASCII characters",
			callmeta.IdempotencyKey, callmeta.MaxIdempotencyKeyLen)
	}
	return invalid(v, reason, msg)
}

// validateID checks a payment id; a well-formed unknown id is NOT_FOUND.
func validateID(id string) error {
	var v rpcerr.Violations
	checkID(&v, "id", id)
	return v.Err()
}
