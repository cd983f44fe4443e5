package order

import (
	"bytes"
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/protocheck"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// CreateOrder implements orderv1.OrderServiceServer: authenticate, validate,
// claim the idempotency key, then run the saga (package doc).
func (s *Service) CreateOrder(ctx context.Context, req *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	var v rpcerr.Violations
	key, err := idempotencyKey(ctx, &v)
	if err != nil {
		return nil, err
	}
	if err := protocheck.Check(&v, req); err != nil {
		return nil, err
	}
	async := prefersAsync(ctx, &v)
	if err := v.Err(); err != nil {
		return nil, err
	}
	rec := s.newRecord(p.Subject, key, req)
	id := rec.Order.GetId()
	s.inflight.acquire(id) // a fresh id: always ours; held before the row exists
	prev, err := s.store.Create(ctx, rec)
	if err != nil || prev != nil {
		s.inflight.release(id)
	}
	if err != nil {
		return nil, s.storeErr(ctx, "create order", err)
	}
	if prev != nil {
		return s.replay(ctx, prev, rec.RequestHash, async)
	}
	defer s.inflight.release(id)
	s.log.InfoContext(ctx, "order accepted", "orderId", id, "customer", p.Subject)
	return s.run(ctx, rec, async)
}

func (s *Service) newRecord(customer, key string, req *orderv1.CreateOrderRequest) *Record {
	now := timestamppb.New(time.Now())
	lines := make([]*orderv1.OrderLine, len(req.GetLines()))
	for i, l := range req.GetLines() {
		lines[i] = &orderv1.OrderLine{Sku: l.GetSku(), Quantity: l.GetQuantity()}
	}
	return &Record{
		Order: &orderv1.Order{
			Id:            newOrderID(),
			Customer:      customer,
			Lines:         lines,
			Status:        orderv1.Order_STATUS_PENDING,
			PaymentMethod: req.GetPaymentMethod(),
			CreateTime:    now,
			UpdateTime:    proto.Clone(now).(*timestamppb.Timestamp),
		},
		IdempotencyKey: key,
		RequestHash:    hashRequest(req),
	}
}

// run drives a freshly stored order within the caller's budget and answers;
// async: the caller prefers respond-async.
func (s *Service) run(ctx context.Context, rec *Record, async bool) (*orderv1.Order, error) {
	rctx, cancel := s.runContext(ctx)
	rec, out := s.drive(rctx, rec)
	cancel()
	if out != inventoryDown {
		return answer(ctx, rec, async)
	}
	// Inventory could not be reached: nothing is known to be reserved and
	// nothing was charged. A caller that prefers an answer later gets the
	// order ACCEPTED while the bound allows (accept.go); otherwise the
	// order is withdrawn and the key freed. Any reservation that did land
	// is released by its TTL, or found again by order id when the
	// reconciler runs an accepted order.
	refusal := errInventoryDown
	if async {
		var o *orderv1.Order
		if o, refusal = s.accept(ctx, rec); o != nil {
			return o, nil
		}
	}
	id := rec.Order.GetId()
	pctx, cancel := persistContext(ctx)
	defer cancel()
	if err := s.store.Delete(pctx, id); err != nil {
		// Still stored PENDING, so the reconciler will finish it; say so.
		s.log.ErrorContext(ctx, "withdraw order", "orderId", id, "err", err.Error())
		return rec.order(), nil
	}
	s.changes.notify(id)
	s.log.WarnContext(ctx, "inventory unavailable; order withdrawn", "orderId", id)
	return nil, refusal
}

// answer is CreateOrder's reply for a stored order: FAILED orders become
// their business error, anything else is returned as is; an ACCEPTED one
// to a caller that prefers respond-async says the preference was applied.
func answer(ctx context.Context, rec *Record, async bool) (*orderv1.Order, error) {
	switch rec.Order.GetStatus() {
	case orderv1.Order_STATUS_FAILED:
		return nil, failureErr(rec)
	case orderv1.Order_STATUS_ACCEPTED:
		if async {
			applied(ctx)
		}
	}
	return rec.order(), nil
}

// replay answers a call whose key the customer already used.
func (s *Service) replay(ctx context.Context, prev *Record, hash []byte, async bool) (*orderv1.Order, error) {
	id := prev.Order.GetId()
	if !bytes.Equal(prev.RequestHash, hash) {
		return nil, rpcerr.Fail(Domain, typev1.Reason_REASON_IDEMPOTENCY_KEY_REUSED,
			"the idempotency key was used for a different request", MetaOrderID, id)
	}
	rec, err := s.awaitSettled(ctx, prev)
	if errors.Is(err, ErrNotFound) {
		// The first call withdrew it: inventory was unreachable.
		return nil, errInventoryDown
	}
	if err != nil {
		return nil, s.storeErr(ctx, "replay", err, "orderId", id)
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs(ReplayedHeader, "true")) // fails only outside a gRPC server
	return answer(ctx, rec, async)
}

// awaitSettled waits while a saga run in this process still drives a
// PENDING order, until shortly before the caller's deadline, and returns the
// stored order.
func (s *Service) awaitSettled(ctx context.Context, rec *Record) (*Record, error) {
	if rec.Order.GetStatus() != orderv1.Order_STATUS_PENDING {
		return rec, nil
	}
	id := rec.Order.GetId()
	if done, running := s.inflight.watch(id); running {
		wctx, cancel := s.runContext(ctx)
		select {
		case <-done:
		case <-wctx.Done():
		}
		cancel()
	} else if _, shared := s.store.(leaser); shared {
		return s.pollSettled(ctx, id)
	}
	pctx, cancel := persistContext(ctx)
	defer cancel()
	return s.store.Get(pctx, id)
}

// sharedPoll is how often a replay polls a shared store for an order
// another replica may be driving.
const sharedPoll = 25 * time.Millisecond

// pollSettled re-reads order id from a shared store until it is no longer
// PENDING or until shortly before the caller's deadline (runContext), and
// returns the last read: with several replicas the first call may be
// running on another one, whose progress only the database shows.
func (s *Service) pollSettled(ctx context.Context, id string) (*Record, error) {
	wctx, cancel := s.runContext(ctx)
	defer cancel()
	tick := time.NewTicker(sharedPoll)
	defer tick.Stop()
	for {
		pctx, pcancel := persistContext(ctx)
		rec, err := s.store.Get(pctx, id)
		pcancel()
		if err != nil || rec.Order.GetStatus() != orderv1.Order_STATUS_PENDING {
			return rec, err
		}
		select {
		case <-wctx.Done():
			return rec, nil
		case <-tick.C:
		}
	}
}
