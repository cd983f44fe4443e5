package payment

import (
	"fmt"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/protocheck"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// MaxAmountMinor caps CreatePayment's amount.amount_minor (Money's rule in
// money.proto; repeated here for the order service's total check): 1e15 minor units,
// 10 trillion in major units of a two-decimal currency. It sits above the
// largest unit price inventory accepts (1e12) times the most units of one
// order line (1000), but an order of many such lines can exceed it, so the
// order service checks its total against it before charging.
const MaxAmountMinor = 1_000_000_000_000_000

// Page sizes of ListPayments.
const (
	defaultPageSize = 50  // when page_size is 0
	maxPageSize     = 100 // the largest page_size
)

// validateCreate checks the request against its proto rules (protocheck),
// then what they cannot say: that the method is one of the test methods
// (a business rule with its own reason), and the idempotency key. The ErrorInfo reason names the
// most basic problem: a missing key, then an unknown method.
func validateCreate(req *paymentv1.CreatePaymentRequest, key string) error {
	var v rpcerr.Violations
	reason, msg := "", ""
	if err := protocheck.Check(&v, req); err != nil {
		return err
	}
	// A method that breaks its rules (empty, too long) is reported by them;
	// a well-formed one must be a known method. The method is never echoed:
	// a client may have sent a card number there, and the message is logged
	// (the access line's error, the order service's step failure).
	if _, known := methods[req.GetPaymentMethod()]; !known && !v.Has("payment_method") {
		v.Add("payment_method", "must be pm_card_ok, pm_card_declined or pm_card_insufficient_funds")
		reason, msg = reasonUnknownPaymentMethod, "unknown payment method"
	}
	if !callmeta.ValidIdempotencyKey(key) {
		reason = reasonIdempotencyKeyMissing
		msg = fmt.Sprintf("the %q metadata is required: 1-%d printable ASCII characters",
			callmeta.IdempotencyKey, callmeta.MaxIdempotencyKeyLen)
	}
	return invalid(v, reason, msg)
}
