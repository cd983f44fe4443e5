package order

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
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
		s.stuck(ctx, rec, "ReserveStock", status.Error(codes.FailedPrecondition, err.Error()))
		return rec, pending
	}
	var ok bool
	if rec, ok = s.save(ctx, rec, next); !ok {
		return rec, outcomeOf(rec)
	}
	pay, err := s.charge(ctx, rec)
	if err != nil {
		s.stuck(ctx, rec, "CreatePayment", err)
		return rec, pending
	}
	switch pay.GetStatus() {
	case paymentv1.Payment_STATUS_CAPTURED:
	case paymentv1.Payment_STATUS_DECLINED:
		return s.declined(ctx, rec, pay)
	default: // REFUNDED by hand while PENDING: needs a person, not a guess.
		s.stuck(ctx, rec, "CreatePayment", status.Errorf(codes.FailedPrecondition, "payment %s is %v", pay.GetId(), pay.GetStatus()))
		return rec, pending
	}
	next = rec.clone()
	next.Order.PaymentId = pay.GetId()
	if rec, ok = s.save(ctx, rec, next); !ok {
		return rec, outcomeOf(rec)
	}
	if res.GetState() != inventoryv1.Reservation_STATE_COMMITTED {
		if err := s.commit(ctx, rec); err != nil {
			return s.commitFailed(ctx, rec, err)
		}
	}
	next = rec.clone()
	next.Order.Status = orderv1.Order_STATUS_CONFIRMED
	rec, _ = s.save(ctx, rec, next)
	s.log.InfoContext(ctx, "order settled", "orderId", rec.Order.GetId(), "status", rec.Order.GetStatus().String())
	return rec, outcomeOf(rec)
}

// withReservation returns rec with the reservation's id, each line's unit
// price and the total: the sum of quantity × unit price over the
// reservation's lines.
func withReservation(rec *Record, res *inventoryv1.Reservation) (*Record, error) {
	prices := make(map[string]*typev1.Money, len(res.GetLines()))
	total := &typev1.Money{}
	for i, l := range res.GetLines() {
		p := l.GetUnitPrice()
		if i == 0 {
			total.Currency = p.GetCurrency()
		} else if p.GetCurrency() != total.Currency {
			return nil, fmt.Errorf("reservation %s mixes currencies %s and %s", res.GetId(), total.Currency, p.GetCurrency())
		}
		total.AmountMinor += int64(l.GetQuantity()) * p.GetAmountMinor()
		prices[l.GetSku()] = p
	}
	next := rec.clone()
	next.Order.ReservationId = res.GetId()
	next.Order.Total = total
	for _, l := range next.Order.GetLines() {
		p, ok := prices[l.GetSku()]
		if !ok {
			return nil, fmt.Errorf("reservation %s has no line for %s", res.GetId(), l.GetSku())
		}
		l.UnitPrice = proto.Clone(p).(*typev1.Money)
	}
	return next, nil
}

// save stores next if the order is still PENDING and returns it. When it is
// not (another run settled it) or the store fails, it returns what is
// stored, or cur, and false: the run must stop.
func (s *Service) save(ctx context.Context, cur, next *Record) (*Record, bool) {
	next.Order.UpdateTime = timestamppb.New(s.now())
	pctx, cancel := persistContext(ctx)
	defer cancel()
	err := s.store.Update(pctx, next, orderv1.Order_STATUS_PENDING)
	if err == nil {
		return next, true
	}
	id := cur.Order.GetId()
	if errors.Is(err, ErrConflict) {
		if stored, gerr := s.store.Get(pctx, id); gerr == nil {
			s.log.WarnContext(ctx, "order changed by another run", "orderId", id, "status", stored.Order.GetStatus().String())
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
		"status", rec.Order.GetStatus().String(), "reason", rec.Order.GetFailureReason())
	return rec, outcomeOf(rec)
}

// stuck logs that a step ended without a definite answer, so the order stays
// PENDING for the reconciler. Unknown outcomes are expected (warn); a
// definite answer the saga has no rule for is a bug somewhere (error).
func (s *Service) stuck(ctx context.Context, rec *Record, step string, err error) {
	lvl, msg := slog.LevelWarn, "outcome unknown; order stays pending"
	if !unknownOutcome(err) {
		lvl, msg = slog.LevelError, "unexpected answer; order stays pending"
	}
	s.log.Log(ctx, lvl, msg, "orderId", rec.Order.GetId(), "step", step, "err", err.Error())
}
