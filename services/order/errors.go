package order

import (
	"context"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/gen/portico/type/v1/reasons"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Domain is the google.rpc.ErrorInfo domain of every order error.
const Domain = "order.portico.dev"

// ErrorInfo reasons this package sends. Callers branch on the
// portico.type.v1.Reason they name (rpcerr.ParseReason), where each is
// defined with its gRPC code; package reasons holds its constant.
const (
	reasonUnauthenticated       = reasons.UnauthenticatedCaller
	reasonIdempotencyKeyMissing = reasons.IdempotencyKeyMissing
	reasonIdempotencyKeyReused  = reasons.IdempotencyKeyReused
	reasonOrderNotFound         = reasons.OrderNotFound
	reasonNotCancellable        = reasons.OrderNotCancellable
	reasonPermissionDenied      = reasons.PermissionDenied
	reasonInventoryUnavailable  = reasons.InventoryUnavailable
	reasonPaymentUnavailable    = reasons.PaymentUnavailable
	// CreateOrder's business failures; the order is stored FAILED.
	reasonInsufficientStock  = reasons.InsufficientStock
	reasonItemNotFound       = reasons.ItemNotFound
	reasonPaymentDeclined    = reasons.PaymentDeclined
	reasonReservationExpired = reasons.ReservationExpired
	// CreateOrder's definite failures without a business rule of their own;
	// the order is compensated and stored FAILED. The reason is the
	// failure_reason.
	reasonInvalidTotal          = reasons.InvalidTotal
	reasonInvalidPaymentRequest = reasons.InvalidPaymentRequest
	reasonUpstreamRejected      = reasons.UpstreamRejected
)

// Order.failure_reason values: the reason of the error a FAILED order
// answers, except INSUFFICIENT_FUNDS, which answers PAYMENT_DECLINED.
const (
	failureInsufficientStock  = reasonInsufficientStock
	failureItemNotFound       = reasonItemNotFound
	failurePaymentDeclined    = reasonPaymentDeclined
	failureReservationExpired = reasonReservationExpired
	// failureInvalidTotal: the reservation's prices give no chargeable
	// total (mixed currencies, an unpriced line, an overflow, zero, or above
	// the payment service's MaxAmountMinor). ErrorInfo metadata "cause".
	failureInvalidTotal = reasonInvalidTotal
	// failureInvalidPaymentRequest: the payment service answered
	// CreatePayment INVALID_ARGUMENT (e.g. an unknown payment method).
	failureInvalidPaymentRequest = reasonInvalidPaymentRequest
	// failureUpstreamRejected: inventory or payment gave any other definite
	// error the saga has no rule for (NOT_FOUND, PERMISSION_DENIED,
	// UNIMPLEMENTED, FAILED_PRECONDITION with an unknown reason, ...), or
	// returned a payment that is neither captured nor declined. ErrorInfo
	// metadata "step" and "upstreamCode" plus, when the dependency sent one,
	// "upstreamReason"; or "step" and "paymentStatus".
	failureUpstreamRejected = reasonUpstreamRejected
)

// failureInsufficientFunds is the payment service's decline reason for
// pm_card_insufficient_funds, kept as the order's failure_reason.
const failureInsufficientFunds = payInsufficientFunds

// ErrorInfo metadata keys.
const (
	MetaOrderID       = "orderId"
	MetaSKU           = "sku"
	MetaRequested     = "requested"
	MetaAvailable     = "available"
	MetaDeclineReason = "declineReason"
	// MetaCause says why a total is invalid: MIXED_CURRENCIES, UNPRICED_LINE,
	// BAD_LINE, OVERFLOW, ZERO_TOTAL or ABOVE_PAYMENT_LIMIT.
	MetaCause = "cause"
	// MetaStep is the saga step a dependency rejected: ReserveStock,
	// CreatePayment or CommitReservation.
	MetaStep = "step"
	// MetaUpstreamCode is the dependency's gRPC code, e.g. PERMISSION_DENIED.
	MetaUpstreamCode = "upstreamCode"
	// MetaUpstreamReason is the dependency's ErrorInfo reason, when it sent one.
	MetaUpstreamReason = "upstreamReason"
	// MetaPaymentStatus is the status of a payment CreatePayment returned
	// that is neither CAPTURED nor DECLINED (e.g. REFUNDED).
	MetaPaymentStatus = "paymentStatus"
	// MetaLimit, on INVENTORY_UNAVAILABLE to a caller preferring
	// respond-async, names the bound that kept the order from waiting:
	// LimitCustomer (WithMaxAcceptedPerCustomer). Absent for the other
	// refusals, the global bound's included.
	MetaLimit = "limit"
)

// LimitCustomer is MetaLimit's value when the customer's orders waiting
// ACCEPTED are at WithMaxAcceptedPerCustomer.
const LimitCustomer = "customer"

// ReplayedHeader is the response header CreateOrder sets to "true" when it
// answers from an earlier call with the same idempotency key
// (callmeta.ReplayedKey).
const ReplayedHeader = callmeta.ReplayedKey

// retryAfter is the RetryInfo delay on UNAVAILABLE and on cancelling a
// PENDING order.
const retryAfter = time.Second

// unavailable is reason r (INVENTORY_UNAVAILABLE, PAYMENT_UNAVAILABLE) with
// RetryInfo.
// md is ErrorInfo metadata, key and value pairs.
func unavailable(r typev1.Reason, msg string, md ...string) error {
	return rpcerr.WithRetryInfo(rpcerr.Fail(Domain, r, msg, md...), retryAfter)
}

// errInventoryDown is CreateOrder's answer when inventory could not be
// reached and the order was withdrawn.
var errInventoryDown = unavailable(typev1.Reason_REASON_INVENTORY_UNAVAILABLE, "inventory is unavailable; no order was created")

// orderNotFound is NOT_FOUND for id, which load has checked against its rules,
// so the message echoes at most 64 safe characters.
func orderNotFound(id string) error {
	return rpcerr.Fail(Domain, typev1.Reason_REASON_ORDER_NOT_FOUND, "order "+id+" not found", MetaOrderID, id)
}

// failureErr is the error CreateOrder answers for a FAILED order, built only
// from what is stored, so a replay gets the same error as the first call.
func failureErr(r *Record) error {
	id, reason := r.Order.GetId(), r.Order.GetFailureReason()
	md := []string{MetaOrderID, id}
	keys := make([]string, 0, len(r.FailureInfo))
	for k := range r.FailureInfo {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		md = append(md, k, r.FailureInfo[k])
	}
	switch reason {
	case failureInsufficientStock:
		return rpcerr.Fail(Domain, typev1.Reason_REASON_INSUFFICIENT_STOCK,
			"not enough stock of "+r.FailureInfo[MetaSKU]+"; order "+id+" failed", md...)
	case failureItemNotFound:
		return rpcerr.Fail(Domain, typev1.Reason_REASON_ITEM_NOT_FOUND,
			"no item "+r.FailureInfo[MetaSKU]+"; order "+id+" failed", md...)
	case failurePaymentDeclined, failureInsufficientFunds:
		return rpcerr.Fail(Domain, typev1.Reason_REASON_PAYMENT_DECLINED,
			"payment declined ("+reason+"); order "+id+" failed", md...)
	case failureInvalidTotal:
		return rpcerr.Fail(Domain, typev1.Reason_REASON_INVALID_TOTAL,
			"the order total cannot be charged ("+r.FailureInfo[MetaCause]+"); order "+id+" failed", md...)
	case failureInvalidPaymentRequest:
		return rpcerr.Fail(Domain, typev1.Reason_REASON_INVALID_PAYMENT_REQUEST,
			"the payment service rejected the charge; order "+id+" failed", md...)
	case failureUpstreamRejected:
		why := r.FailureInfo[MetaUpstreamCode]
		if st, ok := r.FailureInfo[MetaPaymentStatus]; ok {
			why = "payment " + st
		}
		return rpcerr.Fail(Domain, typev1.Reason_REASON_UPSTREAM_REJECTED,
			r.FailureInfo[MetaStep]+" was refused ("+why+"); order "+id+" failed", md...)
	default:
		// RESERVATION_EXPIRED, or a reason stored by another version.
		if r, ok := rpcerr.ParseReason(reason); ok && rpcerr.ReasonCode(r) != codes.Unknown {
			return rpcerr.Fail(Domain, r, "order "+id+" failed: "+reason, md...)
		}
		return rpcerr.New(codes.FailedPrecondition, Domain, reason, "order "+id+" failed: "+reason, md...)
	}
}

// unknownOutcome reports whether err leaves it open whether the call took
// effect: the request may have run and only the answer was lost, or the
// callee failed in a way that says nothing about its effect. These are the
// transport-ish codes (and DATA_LOSS, a server fault like INTERNAL); an
// error that is not a status counts as UNKNOWN. Every other code is a
// definite answer: the call did not take effect.
func unknownOutcome(err error) bool {
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Canceled, codes.Unknown, codes.Internal,
		codes.Aborted, codes.ResourceExhausted, codes.Unavailable, codes.DataLoss:
		return true
	}
	return false
}

// codeName is the code's canonical name (rpcerr.CodeName).
func codeName(c codes.Code) string { return rpcerr.CodeName(c) }

// isFailure reports whether err is the dependency's definite business
// failure: code c with ErrorInfo reason in domain.
func isFailure(err error, c codes.Code, domain, reason string) bool {
	info := rpcerr.ErrorInfo(err)
	return status.Code(err) == c && info.GetDomain() == domain && info.GetReason() == reason
}

// depErr turns a dependency failure in CancelOrder into the caller's error:
// UNAVAILABLE (retry is safe; the order did not change) unless the caller's
// own context ended.
func depErr(ctx context.Context, reason typev1.Reason, err error) error {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	if unknownOutcome(err) {
		return unavailable(reason, "dependency failed: "+status.Convert(err).Message())
	}
	return status.Error(codes.Internal, "dependency refused the request")
}

// statusName is an order's status as the API and the logs show it:
// "CONFIRMED", not the proto enum's "STATUS_CONFIRMED".
func statusName(st orderv1.Order_Status) string {
	return strings.TrimPrefix(st.String(), "STATUS_")
}

// paymentStatusName is a payment's status as the API and the logs show it.
func paymentStatusName(st paymentv1.Payment_Status) string {
	return strings.TrimPrefix(st.String(), "STATUS_")
}

// internal is the answer for a store fault; details go to the log only.
func internal() error { return status.Error(codes.Internal, "internal error") }

// storeErr logs a store failure and answers it: the caller's own
// cancellation or deadline as such, anything else as INTERNAL.
func (s *Service) storeErr(ctx context.Context, op string, err error, kv ...any) error {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	s.log.ErrorContext(ctx, op+": store", append(kv, "err", err.Error())...)
	return internal()
}
