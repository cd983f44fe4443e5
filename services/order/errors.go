package order

import (
	"context"
	"sort"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Domain is the google.rpc.ErrorInfo domain of every order error.
const Domain = "order.portico.dev"

// ErrorInfo reasons, stable for callers to branch on.
const (
	ReasonUnauthenticated       = "UNAUTHENTICATED_CALLER"
	ReasonIdempotencyKeyMissing = "IDEMPOTENCY_KEY_MISSING"
	ReasonIdempotencyKeyReused  = "IDEMPOTENCY_KEY_REUSED"
	ReasonOrderNotFound         = "ORDER_NOT_FOUND"
	ReasonNotCancellable        = "ORDER_NOT_CANCELLABLE"
	ReasonPermissionDenied      = "PERMISSION_DENIED"
	ReasonInventoryUnavailable  = "INVENTORY_UNAVAILABLE"
	ReasonPaymentUnavailable    = "PAYMENT_UNAVAILABLE"
	// CreateOrder's business failures; the order is stored FAILED.
	ReasonInsufficientStock  = "INSUFFICIENT_STOCK"
	ReasonItemNotFound       = "ITEM_NOT_FOUND"
	ReasonPaymentDeclined    = "PAYMENT_DECLINED"
	ReasonReservationExpired = "RESERVATION_EXPIRED"
)

// Order.failure_reason values.
const (
	FailureInsufficientStock  = "INSUFFICIENT_STOCK"
	FailureItemNotFound       = "ITEM_NOT_FOUND"
	FailurePaymentDeclined    = "PAYMENT_DECLINED"
	FailureInsufficientFunds  = "INSUFFICIENT_FUNDS"
	FailureReservationExpired = "RESERVATION_EXPIRED"
)

// ErrorInfo metadata keys.
const (
	MetaOrderID       = "orderId"
	MetaSKU           = "sku"
	MetaRequested     = "requested"
	MetaAvailable     = "available"
	MetaDeclineReason = "declineReason"
)

// ReplayedHeader is the response header CreateOrder sets to "true" when it
// answers from an earlier call with the same idempotency key. The REST edge
// turns it into Idempotent-Replayed: true.
const ReplayedHeader = "x-portico-replayed"

// retryAfter is the RetryInfo delay on UNAVAILABLE and on cancelling a
// PENDING order.
const retryAfter = time.Second

func unavailable(reason, msg string) error {
	return rpcerr.WithRetryInfo(rpcerr.New(codes.Unavailable, Domain, reason, msg), retryAfter)
}

func orderNotFound(id string) error {
	return rpcerr.New(codes.NotFound, Domain, ReasonOrderNotFound, "order "+id+" not found", MetaOrderID, id)
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
	case FailureInsufficientStock:
		return rpcerr.New(codes.FailedPrecondition, Domain, ReasonInsufficientStock,
			"not enough stock of "+r.FailureInfo[MetaSKU]+"; order "+id+" failed", md...)
	case FailureItemNotFound:
		return rpcerr.New(codes.NotFound, Domain, ReasonItemNotFound,
			"no item "+r.FailureInfo[MetaSKU]+"; order "+id+" failed", md...)
	case FailurePaymentDeclined, FailureInsufficientFunds:
		return rpcerr.New(codes.FailedPrecondition, Domain, ReasonPaymentDeclined,
			"payment declined ("+reason+"); order "+id+" failed", md...)
	default:
		return rpcerr.New(codes.FailedPrecondition, Domain, reason, "order "+id+" failed: "+reason, md...)
	}
}

// unknownOutcome reports whether err leaves it open whether the call took
// effect: the request may have run and only the answer was lost.
func unknownOutcome(err error) bool {
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Canceled, codes.Unknown, codes.Internal,
		codes.Aborted, codes.ResourceExhausted, codes.Unavailable:
		return true
	}
	return false
}

// isFailure reports whether err is the dependency's definite business
// failure: code c with ErrorInfo reason in domain.
func isFailure(err error, c codes.Code, domain, reason string) bool {
	info := rpcerr.ErrorInfo(err)
	return status.Code(err) == c && info.GetDomain() == domain && info.GetReason() == reason
}

// depErr turns a dependency failure in CancelOrder into the caller's error:
// UNAVAILABLE (retry is safe; the order did not change) unless the caller's
// own context ended.
func depErr(ctx context.Context, reason string, err error) error {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	if unknownOutcome(err) {
		return unavailable(reason, "dependency failed: "+status.Convert(err).Message())
	}
	return status.Error(codes.Internal, "dependency refused the request")
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
