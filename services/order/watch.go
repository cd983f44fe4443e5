package order

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// WatchOrder implements orderv1.OrderServiceServer: the order as stored,
// then every change, until a final status, each with its etag as GetOrder
// answers it (Record.order, on a copy: rec stays as stored for the
// comparison in nextChange). Ownership is GetOrder's.
//
// A change saved by this process wakes the watch at once (changes); one
// saved by another replica is seen at the next poll of the store, every
// WithWatchPoll. Each send blocks while the client (the edge) does not
// read, so a slow reader holds one order, never a queue of them; the call
// ends when its context does.
func (s *Service) WatchOrder(req *orderv1.WatchOrderRequest, stream grpc.ServerStreamingServer[orderv1.Order]) error {
	ctx := stream.Context()
	p, err := caller(ctx)
	if err != nil {
		return err
	}
	rec, err := s.load(ctx, p, req)
	if err != nil {
		return err
	}
	if err := stream.Send(rec.clone().order()); err != nil {
		return err
	}
	poll := time.NewTicker(s.watchPoll)
	defer poll.Stop()
	for !final(rec.Order.GetStatus()) {
		if rec, err = s.nextChange(ctx, rec, poll.C); err != nil {
			return err
		}
		if err := stream.Send(rec.clone().order()); err != nil {
			return err
		}
	}
	return nil
}

// final reports whether a watch ends at status: CONFIRMED (final unless
// cancelled, which a new watch shows), FAILED and CANCELLED.
func final(st orderv1.Order_Status) bool {
	switch st {
	case orderv1.Order_STATUS_CONFIRMED, orderv1.Order_STATUS_FAILED, orderv1.Order_STATUS_CANCELLED:
		return true
	}
	return false
}

// nextChange waits until the stored order differs from cur and returns it.
// It subscribes before reading, so a change between the two is never
// missed. An order withdrawn meanwhile is NOT_FOUND.
func (s *Service) nextChange(ctx context.Context, cur *Record, poll <-chan time.Time) (*Record, error) {
	id := cur.Order.GetId()
	for {
		woken, done := s.changes.wait(id)
		rec, err := s.store.Get(ctx, id)
		switch {
		case ctx.Err() != nil:
			done()
			return nil, status.FromContextError(ctx.Err()).Err()
		case errors.Is(err, ErrNotFound):
			done()
			return nil, orderNotFound(id)
		case err != nil:
			done()
			return nil, s.storeErr(ctx, "watch order", err, "orderId", id)
		case !proto.Equal(rec.Order, cur.Order):
			done()
			return rec, nil
		}
		select {
		case <-woken:
		case <-poll:
		case <-ctx.Done():
		}
		done()
	}
}
