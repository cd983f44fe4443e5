package order

import (
	"context"
	"fmt"
	"time"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/traceid"
)

// reconcileBatch bounds the orders one Reconcile call takes on.
const reconcileBatch = 100

// Reconcile drives every PENDING order older than the reconcile age (by the
// injected clock) that no saga run in this process is driving, oldest first,
// up to 100 per call, each within the budget (WithBudget). It returns how
// many it settled (CONFIRMED or FAILED); the others stay PENDING for the next
// call. The error is only ever the store's or ctx's.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	recs, err := s.store.Pending(ctx, s.now().Add(-s.reconcileAfter), reconcileBatch)
	if err != nil {
		return 0, fmt.Errorf("order: reconcile: %w", err)
	}
	n := 0
	for _, rec := range recs {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if s.reconcileOne(ctx, rec.Order.GetId()) {
			n++
		}
	}
	return n, nil
}

// reconcileOne drives order id unless another run has it; it reports
// whether the order settled.
func (s *Service) reconcileOne(ctx context.Context, id string) bool {
	if !s.inflight.acquire(id) {
		return false
	}
	defer s.inflight.release(id)
	// A trace id of its own, so the order's calls and the dependencies' log
	// lines of this round can be found together.
	ctx = traceid.NewContext(ctx, traceid.New())
	rec, err := s.store.Get(ctx, id) // re-read under the lease: it may have settled meanwhile
	if err != nil {
		s.log.ErrorContext(ctx, "reconcile: store", "orderId", id, "err", err.Error())
		return false
	}
	if rec.Order.GetStatus() != orderv1.Order_STATUS_PENDING {
		return false
	}
	s.log.InfoContext(ctx, "reconciling pending order", "orderId", id)
	rctx, cancel := context.WithTimeout(ctx, s.budget)
	defer cancel()
	rec, out := s.drive(rctx, rec)
	switch out {
	case settled:
		s.log.InfoContext(ctx, "reconciled", "orderId", id, "status", rec.Order.GetStatus().String(),
			"reason", rec.Order.GetFailureReason())
		return true
	case inventoryDown:
		s.log.WarnContext(ctx, "reconcile: inventory unavailable; order stays pending", "orderId", id)
	default:
		s.log.WarnContext(ctx, "reconcile: outcome still unknown; order stays pending", "orderId", id)
	}
	return false
}

// reconcileEvery calls Reconcile every interval until ctx ends.
func (s *Service) reconcileEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.Reconcile(ctx); err != nil && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "reconcile", "err", err.Error())
			}
		}
	}
}
