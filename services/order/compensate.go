package order

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Reasons the dependencies answer with (see their protos).
const (
	invInsufficientStock    = "INSUFFICIENT_STOCK"
	invItemNotFound         = "ITEM_NOT_FOUND"
	invReservationReleased  = "RESERVATION_RELEASED"
	invReservationCommitted = "RESERVATION_COMMITTED"
	payNotCaptured          = "PAYMENT_NOT_CAPTURED"
	payInsufficientFunds    = "INSUFFICIENT_FUNDS"
)

// reserveFailed handles a ReserveStock error: UNAVAILABLE is reported to
// the caller, a stock failure fails the order, anything else leaves it
// PENDING.
func (s *Service) reserveFailed(ctx context.Context, rec *Record, err error) (*Record, outcome) {
	md := rpcerr.ErrorInfo(err).GetMetadata()
	switch {
	case status.Code(err) == codes.Unavailable:
		s.log.WarnContext(ctx, "inventory unavailable", "orderId", rec.Order.GetId(), "err", err.Error())
		return rec, inventoryDown
	case isFailure(err, codes.FailedPrecondition, inventoryDomain, invInsufficientStock):
		return s.fail(ctx, rec, rec.clone(), FailureInsufficientStock, pick(md, MetaSKU, MetaRequested, MetaAvailable))
	case isFailure(err, codes.NotFound, inventoryDomain, invItemNotFound):
		return s.fail(ctx, rec, rec.clone(), FailureItemNotFound, pick(md, MetaSKU))
	}
	s.stuck(ctx, rec, "ReserveStock", err)
	return rec, pending
}

// reservationGone handles a reservation that was released (its TTL ran out,
// or a compensation ran) before this run charged: give back any capture,
// then fail the order, with the decline reason if the charge was declined.
func (s *Service) reservationGone(ctx context.Context, rec *Record, res *inventoryv1.Reservation) (*Record, outcome) {
	pays, err := s.listPayments(ctx, rec.Order.GetId())
	if err != nil {
		s.stuck(ctx, rec, "ListPayments", err)
		return rec, pending
	}
	next := rec.clone()
	next.Order.ReservationId = res.GetId()
	reason, info := FailureReservationExpired, map[string]string(nil)
	for _, p := range pays {
		switch p.GetStatus() {
		case paymentv1.Payment_STATUS_CAPTURED:
			if err := s.refund(ctx, p.GetId()); err != nil {
				s.stuck(ctx, rec, "RefundPayment", err)
				return rec, pending
			}
			s.log.InfoContext(ctx, "payment refunded: reservation released", "orderId", rec.Order.GetId(), "paymentId", p.GetId())
			next.Order.PaymentId = p.GetId()
		case paymentv1.Payment_STATUS_DECLINED:
			reason, info = declineFailure(p)
			next.Order.PaymentId = p.GetId()
		}
	}
	return s.fail(ctx, rec, next, reason, info)
}

// declined compensates a declined charge: release the stock, fail the order.
// A release that does not go through is left to the reservation's TTL; the
// decline itself is definite, so the order still fails.
func (s *Service) declined(ctx context.Context, rec *Record, pay *paymentv1.Payment) (*Record, outcome) {
	id := rec.Order.GetId()
	if err := s.release(ctx, rec.Order.GetReservationId()); err != nil {
		s.log.WarnContext(ctx, "release after decline failed; the reservation TTL will release it",
			"orderId", id, "reservationId", rec.Order.GetReservationId(), "err", err.Error())
	} else {
		s.log.InfoContext(ctx, "reservation released: payment declined", "orderId", id, "reservationId", rec.Order.GetReservationId())
	}
	next := rec.clone()
	next.Order.PaymentId = pay.GetId()
	reason, info := declineFailure(pay)
	return s.fail(ctx, rec, next, reason, info)
}

// commitFailed handles a CommitReservation error. A released (expired)
// reservation means the stock is gone: refund, then fail the order.
func (s *Service) commitFailed(ctx context.Context, rec *Record, err error) (*Record, outcome) {
	if !isFailure(err, codes.FailedPrecondition, inventoryDomain, invReservationReleased) {
		s.stuck(ctx, rec, "CommitReservation", err)
		return rec, pending
	}
	if err := s.refund(ctx, rec.Order.GetPaymentId()); err != nil {
		s.stuck(ctx, rec, "RefundPayment", err)
		return rec, pending
	}
	s.log.InfoContext(ctx, "payment refunded: reservation expired before commit",
		"orderId", rec.Order.GetId(), "paymentId", rec.Order.GetPaymentId())
	return s.fail(ctx, rec, rec.clone(), FailureReservationExpired, nil)
}

// declineFailure maps a declined payment to the order's failure reason and
// ErrorInfo metadata (declineReason: the payment's own reason).
func declineFailure(p *paymentv1.Payment) (string, map[string]string) {
	reason := FailurePaymentDeclined
	if p.GetFailureReason() == payInsufficientFunds {
		reason = FailureInsufficientFunds
	}
	why := p.GetFailureReason()
	if why == "" {
		why = reason
	}
	return reason, map[string]string{MetaDeclineReason: why}
}

// pick copies the present keys of md.
func pick(md map[string]string, keys ...string) map[string]string {
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		if v, ok := md[k]; ok {
			out[k] = v
		}
	}
	return out
}
