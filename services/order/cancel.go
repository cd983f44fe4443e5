package order

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/resourcetag"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// CancelOrder implements orderv1.OrderServiceServer. The customer or an
// admin may cancel a CONFIRMED order; a CANCELLED one comes back unchanged.
//
// A CONFIRMED order's reservation is committed, and inventory cannot release
// committed stock (RESERVATION_COMMITTED). The cancel treats that stock as
// sold: it refunds the payment and marks the order CANCELLED; putting the
// units back is an admin restock (InventoryService.UpdateItem).
//
// With an etag (the request's, or the if-match metadata) a CONFIRMED order
// is cancelled only if the etag is still the order's: FAILED_PRECONDITION
// (ETAG_MISMATCH) otherwise. The store's update is conditional on the order
// still being CONFIRMED, the only state a CONFIRMED order leaves by, so the
// check holds until the write.
//
// An ACCEPTED order has nothing reserved or charged: it becomes CANCELLED
// at once, unless a run is driving it right now, which answers as PENDING
// does (retry later).
func (s *Service) CancelOrder(ctx context.Context, req *orderv1.CancelOrderRequest) (*orderv1.Order, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := s.load(ctx, p, req)
	if err != nil {
		return nil, err
	}
	id := rec.Order.GetId()
	if rec.Order.GetCustomer() != p.Subject && p.Role != callmeta.RoleAdmin {
		return nil, rpcerr.Fail(Domain, typev1.Reason_REASON_PERMISSION_DENIED,
			"only the customer or an admin may cancel an order", MetaOrderID, id)
	}
	if rec.Order.GetStatus() == orderv1.Order_STATUS_CANCELLED {
		// Already done: the answer whatever the etag (RFC 9110 section
		// 13.1.1 lets a change that appears applied answer 2xx), so a
		// retried conditional cancel whose first answer was lost succeeds.
		return rec.order(), nil
	}
	if tag, stale := resourcetag.Stale(resourcetag.Want(ctx, req.GetEtag()), rec.order()); stale {
		r, msg := resourcetag.Mismatch("order " + id)
		return nil, rpcerr.Fail(Domain, r, msg, MetaOrderID, id, "etag", tag)
	}
	switch rec.Order.GetStatus() {
	case orderv1.Order_STATUS_CONFIRMED:
		return s.cancelConfirmed(ctx, rec)
	case orderv1.Order_STATUS_ACCEPTED:
		if o, ok := s.cancelAccepted(ctx, rec); ok {
			return o, nil
		}
		fallthrough // a run is driving it: as PENDING
	case orderv1.Order_STATUS_PENDING:
		return nil, rpcerr.WithRetryInfo(rpcerr.Fail(Domain, typev1.Reason_REASON_ORDER_NOT_CANCELLABLE,
			"order "+id+" is still being settled; retry once it is CONFIRMED", MetaOrderID, id), retryAfter)
	default:
		return nil, rpcerr.Fail(Domain, typev1.Reason_REASON_ORDER_NOT_CANCELLABLE,
			"order "+id+" is "+statusName(rec.Order.GetStatus())+" and cannot be cancelled", MetaOrderID, id)
	}
}

// cancelConfirmed releases (if not committed) and refunds, then stores
// CANCELLED. Both calls are idempotent, so when one fails the order stays
// CONFIRMED and the caller may simply retry.
func (s *Service) cancelConfirmed(ctx context.Context, rec *Record) (*orderv1.Order, error) {
	id := rec.Order.GetId()
	rctx, cancel := s.runContext(ctx)
	defer cancel()
	err := s.release(rctx, rec.Order.GetReservationId())
	if err != nil && !isFailure(err, codes.FailedPrecondition, inventoryDomain, invReservationCommitted) {
		s.log.WarnContext(ctx, "cancel: release failed", "orderId", id, "err", err.Error())
		return nil, depErr(ctx, typev1.Reason_REASON_INVENTORY_UNAVAILABLE, err)
	}
	if err := s.refund(rctx, rec.Order.GetPaymentId()); err != nil {
		s.log.WarnContext(ctx, "cancel: refund failed", "orderId", id, "err", err.Error())
		return nil, depErr(ctx, typev1.Reason_REASON_PAYMENT_UNAVAILABLE, err)
	}
	next := rec.clone()
	next.Order.Status = orderv1.Order_STATUS_CANCELLED
	next.Order.UpdateTime = timestamppb.New(time.Now())
	pctx, cancel := persistContext(ctx)
	defer cancel()
	if err := s.store.Update(pctx, next, orderv1.Order_STATUS_CONFIRMED); err != nil {
		if errors.Is(err, ErrConflict) { // a concurrent cancel won
			if stored, gerr := s.store.Get(pctx, id); gerr == nil {
				return stored.order(), nil
			}
		}
		s.log.ErrorContext(ctx, "cancel: store", "orderId", id, "err", err.Error())
		return nil, internal()
	}
	s.changes.notify(id)
	s.log.InfoContext(ctx, "order cancelled: payment refunded", "orderId", id, "paymentId", next.Order.GetPaymentId())
	return next.order(), nil
}

// cancelAccepted stores an ACCEPTED order CANCELLED while no run drives
// it: it holds the order in this process (inflight) and, on a shared
// store, its lease, so no reconciler can reserve or charge meanwhile.
// false: a run has it, or it is no longer ACCEPTED.
func (s *Service) cancelAccepted(ctx context.Context, rec *Record) (*orderv1.Order, bool) {
	id := rec.Order.GetId()
	if !s.inflight.acquire(id) {
		return nil, false
	}
	defer s.inflight.release(id)
	if !s.lease(ctx, id) {
		return nil, false
	}
	next := rec.clone()
	next.Order.Status = orderv1.Order_STATUS_CANCELLED
	next.Order.UpdateTime = timestamppb.New(time.Now())
	pctx, cancel := persistContext(ctx)
	defer cancel()
	if err := s.store.Update(pctx, next, orderv1.Order_STATUS_ACCEPTED); err != nil {
		s.log.WarnContext(ctx, "cancel accepted order: store", "orderId", id, "err", err.Error())
		return nil, false
	}
	s.log.InfoContext(ctx, "accepted order cancelled before any reservation", "orderId", id)
	return next.order(), true
}
