package payment

import (
	"context"
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/gen/portico/type/v1/reasons"
	"github.com/portico-gateway/portico/internal/resourcetag"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Domain is the google.rpc.ErrorInfo domain of every payment error.
const Domain = "payment.portico.dev"

// ErrorInfo reasons this package sends. Callers branch on the
// portico.type.v1.Reason they name (rpcerr.ParseReason), where each is
// defined with its gRPC code; package reasons holds its constant.
// IDEMPOTENCY_KEY_MISSING and UNKNOWN_PAYMENT_METHOD are
// INVALID_ARGUMENT and built by invalid, which also lists the bad fields.
const (
	reasonPaymentNotFound       = reasons.PaymentNotFound
	reasonIdempotencyKeyMissing = reasons.IdempotencyKeyMissing
	reasonIdempotencyKeyReused  = reasons.IdempotencyKeyReused
	reasonPaymentNotCaptured    = reasons.PaymentNotCaptured
	reasonUnknownPaymentMethod  = reasons.UnknownPaymentMethod
	reasonOrderAlreadyPaid      = reasons.OrderAlreadyPaid
)

// failure is a domain error: a reason, a message and ErrorInfo metadata
// pairs. toStatus turns it into a gRPC status.
type failure struct {
	reason typev1.Reason
	msg    string
	meta   []string
}

func (f *failure) Error() string { return f.msg }

func paymentNotFound(id string) error {
	return &failure{typev1.Reason_REASON_PAYMENT_NOT_FOUND, "payment " + id + " not found", []string{"id", id}}
}

func keyReused() error {
	return &failure{typev1.Reason_REASON_IDEMPOTENCY_KEY_REUSED,
		"the idempotency key was used for a different request", nil}
}

func notCaptured(id string) error {
	return &failure{typev1.Reason_REASON_PAYMENT_NOT_CAPTURED, "payment " + id + " was never captured", []string{"id", id}}
}

func orderPaid(orderID string) error {
	return &failure{typev1.Reason_REASON_ORDER_ALREADY_PAID, "order " + orderID + " is already paid", []string{"order_id", orderID}}
}

func etagMismatch(id, tag string) error {
	r, msg := resourcetag.Mismatch("payment " + id)
	return &failure{r, msg, []string{"id", id, "etag", tag}}
}

var errAdminRequired = &failure{typev1.Reason_REASON_ADMIN_REQUIRED, "the admin role is required", nil}

var errCustomerRead = &failure{typev1.Reason_REASON_PERMISSION_DENIED,
	"payments are read by admins and readers; a customer reads its payment on its order", nil}

// sagaOrder refuses an admin's charge or refund for an order the order
// service runs: only its saga moves that order's money, so the order's
// status always says where the money is.
func sagaOrder(orderID, what string) error {
	return &failure{typev1.Reason_REASON_PERMISSION_DENIED,
		"order " + orderID + " belongs to the order service, which alone " + what + " it; " +
			"to refund it, cancel the order (POST /api/orders/" + orderID + ":cancel)", []string{"order_id", orderID}}
}

// toStatus converts any error from the service's logic to a gRPC status:
// domain failures with their reason's code, cancellation by the context,
// and anything else (a store fault) to INTERNAL, logged but not leaked to
// the caller.
func (s *Service) toStatus(ctx context.Context, err error) error {
	var f *failure
	if errors.As(err, &f) {
		return rpcerr.Fail(Domain, f.reason, f.msg, f.meta...)
	}
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	s.log.ErrorContext(ctx, "payment store failure", "err", err.Error())
	return status.Error(codes.Internal, "internal error")
}

// invalid returns INVALID_ARGUMENT listing every violation in a BadRequest
// and, when reason is set, an ErrorInfo with that reason and msg. It returns
// nil when there is nothing to report.
func invalid(v rpcerr.Violations, reason, msg string) error {
	if reason == "" {
		return v.Err()
	}
	details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Domain: Domain, Reason: reason}}
	if len(v) > 0 {
		br := &errdetails.BadRequest{}
		for _, f := range v {
			br.FieldViolations = append(br.FieldViolations,
				&errdetails.BadRequest_FieldViolation{Field: f.Field, Description: f.Description})
		}
		details = append(details, br)
	}
	st := status.New(codes.InvalidArgument, msg)
	if d, err := st.WithDetails(details...); err == nil {
		st = d
	}
	return st.Err()
}
