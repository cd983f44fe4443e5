package order

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/telemetry"
	"github.com/portico-gateway/portico/internal/traceid"
)

// reconcileBatch bounds the orders one Reconcile call drives.
const reconcileBatch = 100

// maxReconcileBackoff caps the wait between two rounds of one order.
const maxReconcileBackoff = time.Hour

// Reconcile drives every PENDING order older than the reconcile age that no
// saga run in this process is driving and that is
// not backing off, oldest first, up to 100 per call, each within the budget
// (WithBudget); then the ACCEPTED orders (reconcileAccepted). It returns
// how many it settled (CONFIRMED or FAILED); the others stay PENDING or
// ACCEPTED for a later call. The error is only ever the store's or ctx's.
//
// An order that is still PENDING after WithReconcileRounds rounds is logged
// at ERROR and from then on driven only after a wait that starts at
// WithReconcileBackoff and doubles per round, up to an hour, so a stuck
// order costs a few calls an hour, not one per round. The round counts live
// in memory: a restart starts them afresh.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	now := time.Now()
	// Orders backing off are still listed; fetch enough that they cannot
	// crowd out the batch.
	limit := reconcileBatch + s.rounds.waiting(now)
	recs, err := s.store.Pending(ctx, now.Add(-s.reconcileAfter), limit)
	if err != nil {
		return 0, fmt.Errorf("order: reconcile: %w", err)
	}
	if len(recs) < limit { // every PENDING order is listed: forget the rest
		s.rounds.retain(recs)
	}
	s.metrics.pending(recs, now, s.rounds.waiting(now))
	n, driven := 0, 0
	for _, rec := range recs {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		id := rec.Order.GetId()
		if driven == reconcileBatch {
			break
		}
		if !s.rounds.due(id, now) {
			continue
		}
		driven++
		if s.reconcileOne(ctx, id) {
			n++
		}
	}
	m, err := s.reconcileAccepted(ctx)
	return n + m, err
}

// reconcileOne drives order id unless another run has it; it reports
// whether the order settled.
func (s *Service) reconcileOne(ctx context.Context, id string) bool {
	if !s.inflight.acquire(id) {
		return false
	}
	defer s.inflight.release(id)
	if !s.lease(ctx, id) {
		return false
	}
	ctx, span := s.orderTrace(ctx, "reconcile order")
	defer span.End()
	rec, err := s.store.Get(ctx, id) // re-read under the lease: it may have settled meanwhile
	if err != nil {
		s.log.ErrorContext(ctx, "reconcile: store", "orderId", id, "err", err.Error())
		return false
	}
	if rec.Order.GetStatus() != orderv1.Order_STATUS_PENDING {
		s.rounds.forget(id)
		return false
	}
	s.log.InfoContext(ctx, "reconciling pending order", "orderId", id)
	rctx, cancel := context.WithTimeout(ctx, s.budget)
	defer cancel()
	rec, out := s.drive(rctx, rec)
	if out == settled {
		s.rounds.forget(id)
		s.log.InfoContext(ctx, "reconciled", "orderId", id, "status", statusName(rec.Order.GetStatus()),
			"reason", rec.Order.GetFailureReason())
		return true
	}
	why := "outcome still unknown"
	if out == inventoryDown {
		why = "inventory unavailable"
	}
	round, wait := s.rounds.failed(id, time.Now(), s.reconcileRounds, s.reconcileBackoff)
	if wait == 0 {
		s.log.WarnContext(ctx, "reconcile: "+why+"; order stays pending", "orderId", id, "round", round)
		return false
	}
	s.log.ErrorContext(ctx, "reconcile: order still pending after many rounds; backing off",
		"orderId", id, "round", round, "why", why, "nextTryIn", wait.String())
	return false
}

// orderTrace starts a trace of its own for one order's run in a round, so
// the order's calls and the dependencies' log lines of this round can be
// found together.
func (s *Service) orderTrace(ctx context.Context, name string) (context.Context, trace.Span) {
	ctx, span := telemetry.StartRoot(ctx, s.tp, name)
	id := traceid.New()
	if sc := span.SpanContext(); sc.IsValid() {
		id = sc.TraceID().String()
	}
	return traceid.NewContext(ctx, id), span
}

// leaser is a Store shared by several order processes (PostgresStore): it
// lends each PENDING order to one process at a time, so one replica drives
// it while the others leave it alone.
type leaser interface {
	// Lease takes or renews this process's lease on PENDING order id; false
	// when another process holds an unexpired lease or the order settled.
	Lease(ctx context.Context, id string) (bool, error)
}

// lease reports whether this process may drive order id now: always with
// a store of its own, and with a shared one when it holds the lease.
func (s *Service) lease(ctx context.Context, id string) bool {
	l, ok := s.store.(leaser)
	if !ok {
		return true
	}
	won, err := l.Lease(ctx, id)
	if err != nil {
		s.log.ErrorContext(ctx, "reconcile: lease", "orderId", id, "err", err.Error())
	}
	return won
}

// reconcileRound runs Reconcile once and logs a failure; Run calls it
// every ReconcileInterval.
func (s *Service) reconcileRound(ctx context.Context) {
	ctx, span := telemetry.StartRoot(ctx, s.tp, "reconcile round")
	n, err := s.Reconcile(ctx)
	s.metrics.round(n, err)
	telemetry.End(span, err)
	if err != nil && ctx.Err() == nil {
		s.log.ErrorContext(ctx, "reconcile", "err", err.Error())
	}
}

// roundBook remembers, per order the reconciler could not settle, how many
// rounds it has had and when it may be driven next. Safe for concurrent use.
type roundBook struct {
	mu     sync.Mutex
	orders map[string]*roundState
}

type roundState struct {
	rounds int
	next   time.Time // zero: due every round
}

func newRoundBook() *roundBook { return &roundBook{orders: make(map[string]*roundState)} }

// due reports whether order id may be driven at now.
func (b *roundBook) due(id string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.orders[id]
	return !ok || !now.Before(st.next)
}

// failed records a round of id that left it PENDING and returns the round's
// number and how long the order now waits: 0 for the first limit-1 rounds,
// then base, doubling per round up to maxReconcileBackoff.
func (b *roundBook) failed(id string, now time.Time, limit int, base time.Duration) (int, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.orders[id]
	if !ok {
		st = &roundState{}
		b.orders[id] = st
	}
	st.rounds++
	if st.rounds < limit {
		return st.rounds, 0
	}
	wait := base
	for i := limit; i < st.rounds && wait < maxReconcileBackoff; i++ {
		wait *= 2
	}
	wait = min(wait, maxReconcileBackoff)
	st.next = now.Add(wait)
	return st.rounds, wait
}

// forget drops id: it settled, or is gone.
func (b *roundBook) forget(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.orders, id)
}

// waiting returns how many orders are backing off at now.
func (b *roundBook) waiting(now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, st := range b.orders {
		if now.Before(st.next) {
			n++
		}
	}
	return n
}

// retain forgets every order not in pending, the complete list of PENDING
// orders: the others settled elsewhere or were withdrawn.
func (b *roundBook) retain(pending []*Record) {
	keep := make(map[string]bool, len(pending))
	for _, r := range pending {
		keep[r.Order.GetId()] = true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for id := range b.orders {
		if !keep[id] {
			delete(b.orders, id)
		}
	}
}
