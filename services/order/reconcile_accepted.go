package order

import (
	"context"
	"fmt"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// reconcileAccepted runs the saga for ACCEPTED orders in arrival order (up
// to 100 per call) and stops at the first one inventory still cannot take,
// which stays ACCEPTED and heads the next call, so no later order reserves
// stock before an earlier one. An order whose run got past the reservation
// is PENDING from then on and is the PENDING reconciler's, with its rounds
// and backoff. Orders are not aged first: an ACCEPTED order never has a
// run of its CreateOrder still going (inflight guards the moment between).
// Several replicas of a shared store each take the orders they lease, so
// across replicas the order of arrival is kept per replica only.
func (s *Service) reconcileAccepted(ctx context.Context) (int, error) {
	recs, err := s.store.Accepted(ctx, reconcileBatch)
	if err != nil {
		return 0, fmt.Errorf("order: reconcile accepted: %w", err)
	}
	s.metrics.waitingAccepted(len(recs))
	n := 0
	for _, rec := range recs {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		st, ran := s.runAccepted(ctx, rec.Order.GetId())
		switch {
		case !ran:
			continue // another run has it
		case st == orderv1.Order_STATUS_ACCEPTED:
			return n, nil // inventory still cannot take it
		case !unsettled(st):
			n++
		}
	}
	return n, nil
}

// runAccepted drives ACCEPTED order id unless another run has it, and
// returns its status afterwards; ran is false when it did not run.
func (s *Service) runAccepted(ctx context.Context, id string) (_ orderv1.Order_Status, ran bool) {
	if !s.inflight.acquire(id) {
		return 0, false
	}
	defer s.inflight.release(id)
	if !s.lease(ctx, id) {
		return 0, false
	}
	ctx, span := s.orderTrace(ctx, "reconcile accepted order")
	defer span.End()
	rec, err := s.store.Get(ctx, id) // re-read under the lease: it may have been cancelled
	if err != nil {
		s.log.ErrorContext(ctx, "reconcile accepted: store", "orderId", id, "err", err.Error())
		return 0, false
	}
	if rec.Order.GetStatus() != orderv1.Order_STATUS_ACCEPTED {
		return 0, false
	}
	rctx, cancel := context.WithTimeout(ctx, s.budget)
	defer cancel()
	rec, _ = s.drive(rctx, rec)
	st := rec.Order.GetStatus()
	if st == orderv1.Order_STATUS_ACCEPTED {
		s.log.DebugContext(ctx, "accepted order still waits for inventory", "orderId", id)
		return st, true
	}
	s.log.InfoContext(ctx, "reconciled accepted order", "orderId", id, "status", statusName(st),
		"reason", rec.Order.GetFailureReason())
	return st, true
}
