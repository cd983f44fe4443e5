package order

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// outcome is how far one saga run got.
type outcome int

const (
	// settled: the order is stored CONFIRMED or FAILED.
	settled outcome = iota
	// pending: some step's outcome is unknown; the order stays PENDING.
	pending
	// inventoryDown: ReserveStock failed UNAVAILABLE; nothing is known to
	// be reserved and nothing was charged.
	inventoryDown
)

func outcomeOf(rec *Record) outcome {
	if rec.Order.GetStatus() == orderv1.Order_STATUS_PENDING {
		return pending
	}
	return settled
}

// drive runs the saga for a stored PENDING order: reserve, charge, commit.
// Every call is idempotent (ReserveStock by order id, CreatePayment by key
// payment:{id}), so CreateOrder and the reconciler run the same code and a
// second run only repeats answers. ctx bounds the dependency calls; store
// writes are detached from it.
//
// Only an unknown outcome (unknownOutcome) leaves the order PENDING. A
// definite answer settles it: by its business rule where there is one
// (compensate.go), otherwise by abandon, which compensates and fails it.
func (s *Service) drive(ctx context.Context, rec *Record) (*Record, outcome) {
	res, err := s.reserve(ctx, rec)
	if err != nil {
		return s.reserveFailed(ctx, rec, err)
	}
	if res.GetState() == inventoryv1.Reservation_STATE_RELEASED {
		return s.reservationGone(ctx, rec, res)
	}
	next, err := withReservation(rec, res)
	if err != nil {
		return s.invalidTotal(ctx, rec, res, err)
	}
	var ok bool
	if rec, ok = s.save(ctx, rec, next); !ok {
		return rec, outcomeOf(rec)
	}
	pay, err := s.charge(ctx, rec)
	if err != nil {
		return s.chargeFailed(ctx, rec, err)
	}
	switch pay.GetStatus() {
	case paymentv1.Payment_STATUS_CAPTURED:
	case paymentv1.Payment_STATUS_DECLINED:
		return s.declined(ctx, rec, pay)
	default: // REFUNDED by hand while PENDING, or a status this saga does not know.
		next = rec.clone()
		next.Order.PaymentId = pay.GetId()
		return s.abandon(ctx, rec, next, failureUpstreamRejected, map[string]string{
			MetaStep: stepCharge, MetaPaymentStatus: paymentStatusName(pay.GetStatus()),
		})
	}
	// The payment id is stored with the order's next write (CONFIRMED, or
	// FAILED), not on its own: a charge is found again by its key
	// (PaymentKey), so a run that stops before then loses nothing, and
	// one that leaves the order PENDING stores it (keep).
	paid := rec.clone()
	paid.Order.PaymentId = pay.GetId()
	if res.GetState() != inventoryv1.Reservation_STATE_COMMITTED {
		if err := s.commit(ctx, paid); err != nil {
			got, out := s.commitFailed(ctx, rec, paid, err)
			if out != pending {
				return got, out
			}
			return s.keep(ctx, got, paid)
		}
	}
	paid.Order.Status = orderv1.Order_STATUS_CONFIRMED
	rec, _ = s.save(ctx, rec, paid)
	s.log.InfoContext(ctx, "order settled", "orderId", rec.Order.GetId(), "status", statusName(rec.Order.GetStatus()))
	return rec, outcomeOf(rec)
}

// save stores next if the order is still PENDING and returns it. When it is
// not (another run settled it) or the store fails, it returns what is
// stored, or cur, and false: the run must stop.
func (s *Service) save(ctx context.Context, cur, next *Record) (*Record, bool) {
	next.Order.UpdateTime = timestamppb.New(time.Now())
	pctx, cancel := persistContext(ctx)
	defer cancel()
	err := s.store.Update(pctx, next, orderv1.Order_STATUS_PENDING)
	if err == nil {
		return next, true
	}
	id := cur.Order.GetId()
	if errors.Is(err, ErrConflict) {
		if stored, gerr := s.store.Get(pctx, id); gerr == nil {
			s.log.WarnContext(ctx, "order changed by another run", "orderId", id, "status", statusName(stored.Order.GetStatus()))
			return stored, false
		}
	}
	s.log.ErrorContext(ctx, "save order; it stays pending", "orderId", id, "err", err.Error())
	return cur, false
}

// keep stores progress, a PENDING order with what this run learnt since
// rec was stored (the payment id), when the run stops with the order
// PENDING, so the stored order shows it as it did when each step was
// stored on its own.
func (s *Service) keep(ctx context.Context, rec, progress *Record) (*Record, outcome) {
	rec, _ = s.save(ctx, rec, progress)
	return rec, outcomeOf(rec)
}

// fail stores next as FAILED with reason and info.
func (s *Service) fail(ctx context.Context, cur, next *Record, reason string, info map[string]string) (*Record, outcome) {
	next.Order.Status = orderv1.Order_STATUS_FAILED
	next.Order.FailureReason = reason
	next.FailureInfo = info
	rec, _ := s.save(ctx, cur, next)
	s.log.InfoContext(ctx, "order settled", "orderId", rec.Order.GetId(),
		"status", statusName(rec.Order.GetStatus()), "reason", rec.Order.GetFailureReason())
	return rec, outcomeOf(rec)
}

// stuck logs that a step ended without a definite answer, so the order stays
// PENDING for the reconciler. Unknown outcomes are expected (warn); a
// definite refusal while compensating (a refund that cannot be made) needs a
// person (error).
func (s *Service) stuck(ctx context.Context, rec *Record, step string, err error) {
	lvl, msg := slog.LevelWarn, "outcome unknown; order stays pending"
	if !unknownOutcome(err) {
		lvl, msg = slog.LevelError, "unexpected answer; order stays pending"
	}
	s.log.Log(ctx, lvl, msg, "orderId", rec.Order.GetId(), "step", step, "err", err.Error())
}
