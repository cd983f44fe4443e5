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
	if unsettled(rec.Order.GetStatus()) {
		return pending
	}
	return settled
}

// unsettled reports whether an order with status st still has its saga to run
// or finish: PENDING, or ACCEPTED (waiting for inventory).
func unsettled(st orderv1.Order_Status) bool {
	return st == orderv1.Order_STATUS_PENDING || st == orderv1.Order_STATUS_ACCEPTED
}

// drive runs the saga for a stored PENDING or ACCEPTED order: reserve,
// charge, commit.
// Every call is idempotent (ReserveStock by order id, CreatePayment by key
// payment:{id}), so CreateOrder and the reconciler run the same code and a
// second run only repeats answers. ctx bounds the dependency calls; store
// writes are detached from it.
//
// Only an unknown outcome (unknownOutcome) leaves the order PENDING. A
// definite answer settles it: by its business rule where there is one
// (compensate.go), otherwise by abandon, which compensates and fails it.
//
// The order is stored once, when the run stops: CONFIRMED or FAILED, or
// PENDING with what the run learnt (reservation, total, payment id), so
// the reconciler and readers see it as far as it got. Nothing is lost to
// a crash before then: the steps are idempotent, so the next run learns
// it again. An ACCEPTED order that learns anything is stored PENDING from
// then on (save); one whose run learnt nothing stays ACCEPTED.
func (s *Service) drive(ctx context.Context, rec *Record) (*Record, outcome) {
	got, out := s.steps(ctx, rec)
	if out == pending && got != rec {
		return s.keep(ctx, got)
	}
	return got, out
}

// steps runs the saga's steps on rec. It returns the order as stored when
// it settled, and otherwise rec as far as the run got, not stored.
func (s *Service) steps(ctx context.Context, rec *Record) (*Record, outcome) {
	res, err := s.reserve(ctx, rec)
	if err != nil {
		return s.reserveFailed(ctx, rec, err)
	}
	if res.GetState() == inventoryv1.Reservation_STATE_RELEASED {
		return s.reservationGone(ctx, rec, res)
	}
	reserved, err := withReservation(rec, res)
	if err != nil {
		return s.invalidTotal(ctx, rec, res, err)
	}
	pay, err := s.charge(ctx, reserved)
	if err != nil {
		return s.chargeFailed(ctx, reserved, err)
	}
	paid := reserved.clone()
	paid.Order.PaymentId = pay.GetId()
	switch pay.GetStatus() {
	case paymentv1.Payment_STATUS_CAPTURED:
	case paymentv1.Payment_STATUS_DECLINED:
		return s.declined(ctx, reserved, pay)
	default: // REFUNDED by hand while PENDING, or a status this saga does not know.
		return s.abandon(ctx, reserved, paid, failureUpstreamRejected, map[string]string{
			MetaStep: stepCharge, MetaPaymentStatus: paymentStatusName(pay.GetStatus()),
		})
	}
	if res.GetState() != inventoryv1.Reservation_STATE_COMMITTED {
		if err := s.commit(ctx, paid); err != nil {
			return s.commitFailed(ctx, paid, err)
		}
	}
	next := paid.clone()
	next.Order.Status = orderv1.Order_STATUS_CONFIRMED
	rec, _ = s.save(ctx, paid, next)
	s.log.InfoContext(ctx, "order settled", "orderId", rec.Order.GetId(), "status", statusName(rec.Order.GetStatus()))
	return rec, outcomeOf(rec)
}

// keep stores progress, a PENDING order as far as a run got, when the
// run stops with the order PENDING.
func (s *Service) keep(ctx context.Context, progress *Record) (*Record, outcome) {
	rec, _ := s.save(ctx, progress, progress.clone())
	return rec, outcomeOf(rec)
}

// save stores next if the order still has cur's status (PENDING or
// ACCEPTED) and returns it; an ACCEPTED next is stored PENDING, as its run
// got past the reservation. When the status changed (another run settled
// it) or the store fails, it returns what is stored, or cur, and false:
// the run must stop.
func (s *Service) save(ctx context.Context, cur, next *Record) (*Record, bool) {
	next.Order.UpdateTime = timestamppb.New(time.Now())
	if next.Order.GetStatus() == orderv1.Order_STATUS_ACCEPTED {
		next.Order.Status = orderv1.Order_STATUS_PENDING
	}
	pctx, cancel := persistContext(ctx)
	defer cancel()
	err := s.store.Update(pctx, next, cur.Order.GetStatus())
	if err == nil {
		s.changes.notify(next.Order.GetId())
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
