package payment

import (
	"fmt"
	"regexp"
	"unicode/utf8"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Request limits, from the proto contract.
const (
	maxOrderIDLen = 64
	maxIDLen      = 64
)

var currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)

// checkText requires 1-max characters (not bytes).
func checkText(v *rpcerr.Violations, field, s string, max int) {
	if n := utf8.RuneCountInString(s); n == 0 || n > max {
		v.Add(field, fmt.Sprintf("must be 1-%d characters", max))
	}
}

// validateCreate checks the request and its idempotency key. The ErrorInfo
// reason names the most basic problem: a missing key, then an unknown method.
func validateCreate(req *paymentv1.CreatePaymentRequest, key string) error {
	var v rpcerr.Violations
	reason, msg := "", ""
	checkText(&v, "order_id", req.GetOrderId(), maxOrderIDLen)
	if m := req.GetAmount(); m == nil {
		v.Add("amount", "is required")
	} else {
		if m.GetAmountMinor() < 1 {
			v.Add("amount.amount_minor", "must be 1 or more")
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

func validateID(id string) error {
	var v rpcerr.Violations
	checkText(&v, "id", id, maxIDLen)
	return v.Err()
}
