package inventory

import (
	"context"
	"errors"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/gen/portico/type/v1/reasons"
	"github.com/portico-gateway/portico/internal/resourcetag"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Domain is the google.rpc.ErrorInfo domain of every inventory error.
const Domain = "inventory.portico.dev"

// ErrorInfo reasons this package sends. Callers branch on the
// portico.type.v1.Reason they name (rpcerr.ParseReason), where each is
// defined with its gRPC code; package reasons holds its constant.
const (
	reasonItemNotFound         = reasons.ItemNotFound
	reasonItemAlreadyExists    = reasons.ItemAlreadyExists
	reasonInsufficientStock    = reasons.InsufficientStock
	reasonReservationNotFound  = reasons.ReservationNotFound
	reasonReservationReleased  = reasons.ReservationReleased
	reasonReservationCommitted = reasons.ReservationCommitted
	reasonIdempotencyKeyReused = reasons.IdempotencyKeyReused
	reasonAdminRequired        = reasons.AdminRequired
)

// failure is a domain error: a reason, a message and ErrorInfo metadata
// pairs. toStatus turns it into a gRPC status.
type failure struct {
	reason typev1.Reason
	msg    string
	meta   []string
}

func (f *failure) Error() string { return f.msg }

func itemNotFound(sku string) error {
	return &failure{typev1.Reason_REASON_ITEM_NOT_FOUND, "item " + sku + " not found", []string{"sku", sku}}
}

func etagMismatch(sku, tag string) error {
	r, msg := resourcetag.Mismatch("item " + sku)
	return &failure{r, msg, []string{"sku", sku, "etag", tag}}
}

func itemExists(sku string) error {
	return &failure{typev1.Reason_REASON_ITEM_ALREADY_EXISTS, "item " + sku + " already exists", []string{"sku", sku}}
}

func insufficientStock(sku string, requested int32, available int64) error {
	return &failure{typev1.Reason_REASON_INSUFFICIENT_STOCK, "not enough stock of " + sku, []string{
		"sku", sku,
		"requested", strconv.Itoa(int(requested)),
		"available", strconv.FormatInt(available, 10),
	}}
}

func reservationNotFound(id string) error {
	return &failure{typev1.Reason_REASON_RESERVATION_NOT_FOUND, "reservation " + id + " not found", []string{"id", id}}
}

func reservationReleased(id string) error {
	return &failure{typev1.Reason_REASON_RESERVATION_RELEASED, "reservation " + id + " was released", []string{"id", id}}
}

func reservationCommitted(id string) error {
	return &failure{typev1.Reason_REASON_RESERVATION_COMMITTED, "reservation " + id + " was committed", []string{"id", id}}
}

func orderKeyReused(orderID string) error {
	return &failure{typev1.Reason_REASON_IDEMPOTENCY_KEY_REUSED,
		"order " + orderID + " already has a reservation with other lines", []string{"order_id", orderID}}
}

var errAdminRequired = &failure{typev1.Reason_REASON_ADMIN_REQUIRED, "the admin role is required", nil}

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
	s.log.ErrorContext(ctx, "inventory store failure", "err", err.Error())
	return status.Error(codes.Internal, "internal error")
}
