package order

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/gen/portico/type/v1/reasons"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Reasons the dependencies answer with (portico.type.v1.Reason).
const (
	invInsufficientStock    = reasons.InsufficientStock
	invItemNotFound         = reasons.ItemNotFound
	invReservationReleased  = reasons.ReservationReleased
	invReservationCommitted = reasons.ReservationCommitted
	payNotCaptured          = reasons.PaymentNotCaptured
)

// payInsufficientFunds is the payment service's failure_reason of a payment
// declined for want of funds.
const payInsufficientFunds = reasons.InsufficientFunds

// Saga steps, as logged and as ErrorInfo metadata "step".
const (
	stepReserve = "ReserveStock"
	stepCharge  = "CreatePayment"
	stepCommit  = "CommitReservation"
)

// reserveFailed handles a ReserveStock error: UNAVAILABLE is reported to
// the caller, a stock failure fails the order, another unknown outcome
// leaves it PENDING, and any other definite error abandons it.
func (s *Service) reserveFailed(ctx context.Context, rec *Record, err error) (*Record, outcome) {
	md := rpcerr.ErrorInfo(err).GetMetadata()
	switch {
	case status.Code(err) == codes.Unavailable:
		s.log.WarnContext(ctx, "inventory unavailable", "orderId", rec.Order.GetId(), "err", err.Error())
		return rec, inventoryDown
	case isFailure(err, codes.FailedPrecondition, inventoryDomain, invInsufficientStock):
		return s.fail(ctx, rec, rec.clone(), failureInsufficientStock, pick(md, MetaSKU, MetaRequested, MetaAvailable))
	case isFailure(err, codes.NotFound, inventoryDomain, invItemNotFound):
		return s.fail(ctx, rec, rec.clone(), failureItemNotFound, pick(md, MetaSKU))
	case unknownOutcome(err):
		s.stuck(ctx, rec, stepReserve, err)
		return rec, pending
	}
	return s.rejected(ctx, rec, rec.clone(), stepReserve, err)
}

// invalidTotal fails an order whose reservation prices give no chargeable
// total (mixed currencies, overflow, zero, above the payment limit).
// Nothing is charged; the reservation is released.
func (s *Service) invalidTotal(ctx context.Context, rec *Record, res *inventoryv1.Reservation, err error) (*Record, outcome) {
	cause := causeBadLine
	var te *totalError
	if errors.As(err, &te) {
		cause = te.cause
	}
	s.log.ErrorContext(ctx, "invalid order total", "orderId", rec.Order.GetId(), "reservationId", res.GetId(), "err", err.Error())
	next := rec.clone()
	next.Order.ReservationId = res.GetId()
	return s.abandon(ctx, rec, next, failureInvalidTotal, map[string]string{MetaCause: cause})
}

// chargeFailed handles a CreatePayment error: an unknown outcome leaves the
// order PENDING (the charge may have happened); a definite one abandons it.
func (s *Service) chargeFailed(ctx context.Context, rec *Record, err error) (*Record, outcome) {
	if unknownOutcome(err) {
		s.stuck(ctx, rec, stepCharge, err)
		return rec, pending
	}
	return s.rejected(ctx, rec, rec.clone(), stepCharge, err)
}

// rejected abandons the order after a dependency's definite error at step
// that no business rule covers: INVALID_PAYMENT_REQUEST when the payment
// service found the charge invalid, UPSTREAM_REJECTED otherwise.
func (s *Service) rejected(ctx context.Context, rec, next *Record, step string, err error) (*Record, outcome) {
	s.log.WarnContext(ctx, "definite error without a rule; compensating", "orderId", rec.Order.GetId(),
		"step", step, "err", err.Error())
	code := status.Code(err)
	reason := failureUpstreamRejected
	if step == stepCharge && code == codes.InvalidArgument {
		reason = failureInvalidPaymentRequest
	}
	info := map[string]string{MetaStep: step, MetaUpstreamCode: codeName(code)}
	if r := rpcerr.Reason(err); r != "" {
		info[MetaUpstreamReason] = r
	}
	return s.abandon(ctx, rec, next, reason, info)
}

// abandon compensates a definite failure and stores the order FAILED with
// reason and info. Every capture of the order is refunded first (found by
// listing its payments, so a charge an earlier run or an earlier version
// made is found too), then the reservation is released. A release that
// does not go through is left to the reservation's TTL; a payment that may
// still be held is not: when the payments cannot be listed or a refund does
// not go through, the order stays PENDING and the reconciler tries again.
func (s *Service) abandon(ctx context.Context, rec, next *Record, reason string, info map[string]string) (*Record, outcome) {
	if _, ok := s.refundCaptures(ctx, rec, next, reason); !ok {
		return rec, pending
	}
	if id := next.Order.GetReservationId(); id != "" {
		s.releaseOrLeave(ctx, rec, id, reason)
	}
	return s.fail(ctx, rec, next, reason, info)
}

// refundCaptures refunds every CAPTURED payment of the order and records
// the last payment it saw on next. It returns the payments as listed, and
// false (having logged why) when money may still be held: they could not be
// listed or a refund did not go through.
func (s *Service) refundCaptures(ctx context.Context, rec, next *Record, why string) ([]*paymentv1.Payment, bool) {
	id := rec.Order.GetId()
	pays, err := s.listPayments(ctx, id)
	if err != nil {
		s.stuck(ctx, rec, "ListPayments", err)
		return nil, false
	}
	for _, p := range pays {
		switch p.GetStatus() {
		case paymentv1.Payment_STATUS_CAPTURED:
			if err := s.refund(ctx, p.GetId()); err != nil {
				s.stuck(ctx, rec, "RefundPayment", err)
				return nil, false
			}
			s.log.InfoContext(ctx, "payment refunded", "orderId", id, "paymentId", p.GetId(), "why", why)
			next.Order.PaymentId = p.GetId()
		case paymentv1.Payment_STATUS_DECLINED, paymentv1.Payment_STATUS_REFUNDED:
			next.Order.PaymentId = p.GetId()
		}
	}
	return pays, true
}

// releaseOrLeave releases a reservation while compensating; when that does
// not go through, the reservation's TTL releases it.
func (s *Service) releaseOrLeave(ctx context.Context, rec *Record, reservationID, why string) {
	id := rec.Order.GetId()
	if err := s.release(ctx, reservationID); err != nil {
		s.log.WarnContext(ctx, "release failed; the reservation TTL will release it",
			"orderId", id, "reservationId", reservationID, "why", why, "err", err.Error())
		return
	}
	s.log.InfoContext(ctx, "reservation released", "orderId", id, "reservationId", reservationID, "why", why)
}

// reservationGone handles a reservation that was released (its TTL ran out,
// or a compensation ran) before this run charged: give back any capture,
// then fail the order, with the decline reason if the charge was declined.
func (s *Service) reservationGone(ctx context.Context, rec *Record, res *inventoryv1.Reservation) (*Record, outcome) {
	next := rec.clone()
	next.Order.ReservationId = res.GetId()
	pays, ok := s.refundCaptures(ctx, rec, next, "reservation released")
	if !ok {
		return rec, pending
	}
	reason, info := failureReservationExpired, map[string]string(nil)
	for _, p := range pays {
		if p.GetStatus() == paymentv1.Payment_STATUS_DECLINED {
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
	s.releaseOrLeave(ctx, rec, rec.Order.GetReservationId(), "payment declined")
	next := rec.clone()
	next.Order.PaymentId = pay.GetId()
	reason, info := declineFailure(pay)
	return s.fail(ctx, rec, next, reason, info)
}

// commitFailed handles a CommitReservation error. A released (expired)
// reservation means the stock is gone: refund, then fail the order. An
// unknown outcome leaves it PENDING; any other definite error abandons it
// (refund, release).
func (s *Service) commitFailed(ctx context.Context, rec *Record, err error) (*Record, outcome) {
	switch {
	case unknownOutcome(err):
		s.stuck(ctx, rec, stepCommit, err)
		return rec, pending
	case !isFailure(err, codes.FailedPrecondition, inventoryDomain, invReservationReleased):
		return s.rejected(ctx, rec, rec.clone(), stepCommit, err)
	}
	if err := s.refund(ctx, rec.Order.GetPaymentId()); err != nil {
		s.stuck(ctx, rec, "RefundPayment", err)
		return rec, pending
	}
	s.log.InfoContext(ctx, "payment refunded: reservation expired before commit",
		"orderId", rec.Order.GetId(), "paymentId", rec.Order.GetPaymentId())
	return s.fail(ctx, rec, rec.clone(), failureReservationExpired, nil)
}

// declineFailure maps a declined payment to the order's failure reason and
// ErrorInfo metadata (declineReason: the payment's own reason).
func declineFailure(p *paymentv1.Payment) (string, map[string]string) {
	reason := failurePaymentDeclined
	if p.GetFailureReason() == payInsufficientFunds {
		reason = failureInsufficientFunds
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
