package inventory

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/protocheck"
)

// sweepBatch bounds how many reservations one ReleaseExpired call releases,
// so a backlog never holds the write lock for long.
const sweepBatch = 500

// ReserveStock holds stock for every line or for none; see the package doc
// for its idempotency by order_id.
func (s *Service) ReserveStock(ctx context.Context, req *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
	if err := requireRole(ctx, reserveRoles); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	if err := protocheck.Request(req); err != nil {
		return nil, err
	}
	lines := make([]Line, len(req.GetLines()))
	for i, l := range req.GetLines() {
		lines[i] = Line{SKU: l.GetSku(), Quantity: l.GetQuantity()}
	}
	if q, ok := s.store.(quickStore); ok {
		now := time.Now()
		r := Reservation{
			ID: newID("res-"), OrderID: req.GetOrderId(), Lines: lines, State: StateActive,
			ExpireTime: now.Add(s.ttl), CreateTime: now, UpdateTime: now,
		}
		if out, done := q.QuickReserve(ctx, r); done {
			return reservationProto(out), nil
		}
	}
	var out Reservation
	err := s.store.InTx(ctx, func(tx Tx) (err error) {
		out, err = s.reserve(ctx, tx, req.GetOrderId(), lines)
		return err
	})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return reservationProto(out), nil
}

func (s *Service) reserve(ctx context.Context, tx Tx, orderID string, lines []Line) (Reservation, error) {
	now := time.Now()
	prev, err := tx.ReservationByOrder(ctx, orderID)
	switch {
	case err == nil && !sameLines(prev.Lines, lines):
		return Reservation{}, orderKeyReused(orderID)
	case err == nil:
		return s.expireIfDue(ctx, tx, prev, now)
	case !errors.Is(err, ErrNotFound):
		return Reservation{}, err
	}
	for i, l := range lines {
		it, err := tx.Item(ctx, l.SKU)
		if errors.Is(err, ErrNotFound) {
			return Reservation{}, itemNotFound(l.SKU)
		}
		if err != nil {
			return Reservation{}, err
		}
		if it.Stock.Available < int64(l.Quantity) {
			return Reservation{}, insufficientStock(l.SKU, l.Quantity, it.Stock.Available)
		}
		lines[i].Price = it.Price
	}
	for _, l := range lines {
		q := int64(l.Quantity)
		if err := tx.MoveStock(ctx, l.SKU, Stock{Available: -q, Reserved: q}, now); err != nil {
			return Reservation{}, err
		}
	}
	r := Reservation{
		ID: newID("res-"), OrderID: orderID, Lines: lines, State: StateActive,
		ExpireTime: now.Add(s.ttl), CreateTime: now, UpdateTime: now,
	}
	return r, tx.InsertReservation(ctx, r)
}

// sameLines reports whether two line lists hold the same quantities of the
// same SKUs, in any order. Prices are not compared: a repeat does not carry
// them.
func sameLines(a, b []Line) bool {
	key := func(ls []Line) []Line {
		out := make([]Line, len(ls))
		for i, l := range ls {
			out[i] = Line{SKU: l.SKU, Quantity: l.Quantity}
		}
		slices.SortFunc(out, func(x, y Line) int { return cmp.Compare(x.SKU, y.SKU) })
		return out
	}
	return slices.Equal(key(a), key(b))
}

// GetReservation returns one reservation as stored.
func (s *Service) GetReservation(ctx context.Context, req *inventoryv1.GetReservationRequest) (*inventoryv1.Reservation, error) {
	if err := requireRole(ctx, reservationRoles); err != nil {
		return nil, s.toStatus(ctx, err)
	}
	if err := protocheck.Request(req); err != nil {
		return nil, err
	}
	r, err := s.store.Reservation(ctx, req.GetId())
	if errors.Is(err, ErrNotFound) {
		err = reservationNotFound(req.GetId())
	}
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return reservationProto(r), nil
}

// CommitReservation sells the reserved stock. An expired ACTIVE reservation
// is released instead (and the release is kept) and the call fails with
// RESERVATION_RELEASED.
func (s *Service) CommitReservation(ctx context.Context, req *inventoryv1.CommitReservationRequest) (*inventoryv1.Reservation, error) {
	r, err := s.settle(ctx, req, StateCommitted)
	if err == nil && r.State == StateReleased {
		err = s.toStatus(ctx, reservationReleased(r.ID))
	}
	if err != nil {
		return nil, err
	}
	return reservationProto(r), nil
}

// ReleaseReservation returns the reserved stock to available.
func (s *Service) ReleaseReservation(ctx context.Context, req *inventoryv1.ReleaseReservationRequest) (*inventoryv1.Reservation, error) {
	r, err := s.settle(ctx, req, StateReleased)
	if err == nil && r.State == StateCommitted {
		err = s.toStatus(ctx, reservationCommitted(r.ID))
	}
	if err != nil {
		return nil, err
	}
	return reservationProto(r), nil
}

// idRequest is a request naming one reservation (Commit, Release).
type idRequest interface {
	proto.Message
	GetId() string
}

// settle moves reservation id to the final state to if it is ACTIVE and not
// expired, releases it if it is ACTIVE and expired, and returns it. A final
// reservation is returned unchanged; the caller decides whether its state is
// an error. The returned error is already a status.
func (s *Service) settle(ctx context.Context, req idRequest, to State) (Reservation, error) {
	if err := requireRole(ctx, reserveRoles); err != nil {
		return Reservation{}, s.toStatus(ctx, err)
	}
	if err := protocheck.Request(req); err != nil {
		return Reservation{}, err
	}
	id := req.GetId()
	if q, ok := s.store.(quickStore); ok {
		if out, done := q.QuickSettle(ctx, id, to, time.Now()); done {
			return out, nil
		}
	}
	var out Reservation
	err := s.store.InTx(ctx, func(tx Tx) error {
		r, err := tx.Reservation(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return reservationNotFound(id)
		}
		if err != nil {
			return err
		}
		now := time.Now()
		if r, err = s.expireIfDue(ctx, tx, r, now); err != nil || r.State != StateActive {
			out = r
			return err
		}
		out, err = s.finish(ctx, tx, r, to, now)
		return err
	})
	if err != nil {
		return Reservation{}, s.toStatus(ctx, err)
	}
	return out, nil
}

// ReleaseExpired releases ACTIVE reservations whose expire time has passed,
// up to a batch of 500, in one transaction, and returns how many it
// released. Run calls it every sweep interval; tests call it directly, in a
// testing/synctest bubble when the TTL must pass.
func (s *Service) ReleaseExpired(ctx context.Context) (int, error) {
	n := 0
	err := s.store.InTx(ctx, func(tx Tx) error {
		now := time.Now()
		ids, err := tx.Due(ctx, now, sweepBatch)
		if err != nil {
			return err
		}
		for _, id := range ids {
			r, err := tx.Reservation(ctx, id)
			if err != nil {
				return err
			}
			if _, err := s.finish(ctx, tx, r, StateReleased, now); err != nil {
				return err
			}
		}
		n = len(ids)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// expireIfDue releases r if it is ACTIVE and its expire time has come.
func (s *Service) expireIfDue(ctx context.Context, tx Tx, r Reservation, now time.Time) (Reservation, error) {
	if r.State != StateActive || now.Before(r.ExpireTime) {
		return r, nil
	}
	return s.finish(ctx, tx, r, StateReleased, now)
}

// finish moves an ACTIVE reservation's stock out of reserved, into sold
// (COMMITTED) or back to available (RELEASED), and records the state.
func (s *Service) finish(ctx context.Context, tx Tx, r Reservation, to State, now time.Time) (Reservation, error) {
	for _, l := range r.Lines {
		q := int64(l.Quantity)
		d := Stock{Reserved: -q, Available: q}
		if to == StateCommitted {
			d = Stock{Reserved: -q, Sold: q}
		}
		if err := tx.MoveStock(ctx, l.SKU, d, now); err != nil {
			return r, err
		}
	}
	if err := tx.SetState(ctx, r.ID, to, now); err != nil {
		return r, err
	}
	r.State, r.UpdateTime = to, now
	return r, nil
}
