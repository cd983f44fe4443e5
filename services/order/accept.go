package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/prefer"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// prefersAsync reports whether the call's "prefer" metadata (RFC 7240
// syntax, package prefer) asks for respond-async. Malformed or oversized
// preferences are recorded in v (INVALID_ARGUMENT, as the edge answers
// them with 400); unknown preferences are ignored, and so is a
// respond-async with a value ("respond-async=false", prefer.Flag), as the
// edge does.
func prefersAsync(ctx context.Context, v *rpcerr.Violations) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	ps, err := prefer.Parse(md.Get(prefer.MetadataKey))
	if err != nil {
		v.Add("prefer", fmt.Sprintf("the prefer metadata must follow RFC 7240, at most %d bytes and %d preferences",
			prefer.MaxBytes, prefer.MaxPreferences))
		return false
	}
	return ps.Flag(prefer.RespondAsync)
}

// applied answers the response header "preference-applied: respond-async".
func applied(ctx context.Context) {
	_ = grpc.SetHeader(ctx, metadata.Pairs(prefer.AppliedKey, prefer.RespondAsync)) // fails only outside a gRPC server
}

// accept stores rec, a PENDING order whose ReserveStock found inventory
// unavailable, as ACCEPTED for the reconciler, and answers it. A nil order
// (the caller withdraws the order, 503 as without the preference) when
// accepting is off, a bound is reached or the store fails; refusal is then
// the 503 to answer.
func (s *Service) accept(ctx context.Context, rec *Record) (_ *orderv1.Order, refusal error) {
	id := rec.Order.GetId()
	if s.maxAccepted <= 0 || s.maxPerCustomer <= 0 {
		return nil, errInventoryDown
	}
	now := time.Now()
	pctx, cancel := persistContext(ctx)
	defer cancel()
	err := s.store.Accept(pctx, id, now, AcceptBounds{Total: s.maxAccepted, PerCustomer: s.maxPerCustomer})
	switch {
	case errors.Is(err, ErrFull):
		s.log.WarnContext(ctx, "accepted orders at their bound; order withdrawn", "orderId", id, "maxAccepted", s.maxAccepted)
		return nil, errInventoryDown
	case errors.Is(err, ErrCustomerFull):
		s.log.WarnContext(ctx, "customer's accepted orders at their bound; order withdrawn", "orderId", id,
			"customer", rec.Order.GetCustomer(), "maxAcceptedPerCustomer", s.maxPerCustomer)
		return nil, unavailable(typev1.Reason_REASON_INVENTORY_UNAVAILABLE, fmt.Sprintf(
			"inventory is unavailable and %d of your orders already wait for it, the most allowed; no order was created",
			s.maxPerCustomer), MetaLimit, LimitCustomer)
	case err != nil:
		s.log.ErrorContext(ctx, "accept order", "orderId", id, "err", err.Error())
		return nil, errInventoryDown
	}
	s.log.InfoContext(ctx, "inventory unavailable; order accepted for later", "orderId", id)
	applied(ctx)
	next := rec.clone()
	next.Order.Status = orderv1.Order_STATUS_ACCEPTED
	next.Order.UpdateTime = timestamppb.New(now)
	return next.order(), nil
}
