package inventory

import (
	"context"
	"errors"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Domain is the google.rpc.ErrorInfo domain of every inventory error.
const Domain = "inventory.portico.dev"

// ErrorInfo reasons, stable for callers to branch on.
const (
	ReasonItemNotFound         = "ITEM_NOT_FOUND"
	ReasonItemAlreadyExists    = "ITEM_ALREADY_EXISTS"
	ReasonInsufficientStock    = "INSUFFICIENT_STOCK"
	ReasonReservationNotFound  = "RESERVATION_NOT_FOUND"
	ReasonReservationReleased  = "RESERVATION_RELEASED"
	ReasonReservationCommitted = "RESERVATION_COMMITTED"
	ReasonIdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED"
	ReasonAdminRequired        = "ADMIN_REQUIRED"
)

// reasonCodes is the one table from a domain failure to its gRPC code.
var reasonCodes = map[string]codes.Code{
	ReasonItemNotFound:         codes.NotFound,
	ReasonItemAlreadyExists:    codes.AlreadyExists,
	ReasonInsufficientStock:    codes.FailedPrecondition,
	ReasonReservationNotFound:  codes.NotFound,
	ReasonReservationReleased:  codes.FailedPrecondition,
	ReasonReservationCommitted: codes.FailedPrecondition,
	ReasonIdempotencyKeyReused: codes.FailedPrecondition,
	ReasonAdminRequired:        codes.PermissionDenied,
}

// failure is a domain error: a reason, a message and ErrorInfo metadata
// pairs. toStatus turns it into a gRPC status.
type failure struct {
	reason string
	msg    string
	meta   []string
}

func (f *failure) Error() string { return f.msg }

func itemNotFound(sku string) error {
	return &failure{ReasonItemNotFound, "item " + sku + " not found", []string{"sku", sku}}
}

func itemExists(sku string) error {
	return &failure{ReasonItemAlreadyExists, "item " + sku + " already exists", []string{"sku", sku}}
}

func insufficientStock(sku string, requested int32, available int64) error {
	return &failure{ReasonInsufficientStock, "not enough stock of " + sku, []string{
		"sku", sku,
		"requested", strconv.Itoa(int(requested)),
		"available", strconv.FormatInt(available, 10),
	}}
}

func reservationNotFound(id string) error {
	return &failure{ReasonReservationNotFound, "reservation " + id + " not found", []string{"id", id}}
}

func reservationReleased(id string) error {
	return &failure{ReasonReservationReleased, "reservation " + id + " was released", []string{"id", id}}
}

func reservationCommitted(id string) error {
	return &failure{ReasonReservationCommitted, "reservation " + id + " was committed", []string{"id", id}}
}

func orderKeyReused(orderID string) error {
	return &failure{ReasonIdempotencyKeyReused,
		"order " + orderID + " already has a reservation with other lines", []string{"order_id", orderID}}
}

var errAdminRequired = &failure{ReasonAdminRequired, "the admin role is required", nil}

// toStatus converts any error from the service's logic to a gRPC status:
// domain failures by reasonCodes, cancellation by the context, and anything
// else (a store fault) to INTERNAL, logged but not leaked to the caller.
func (s *Service) toStatus(ctx context.Context, err error) error {
	var f *failure
	if errors.As(err, &f) {
		return rpcerr.New(reasonCodes[f.reason], Domain, f.reason, f.msg, f.meta...)
	}
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	s.log.ErrorContext(ctx, "inventory store failure", "err", err.Error())
	return status.Error(codes.Internal, "internal error")
}
