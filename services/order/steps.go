package order

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// PaymentKey is the idempotency key of an order's charge (seed 000): every
// attempt, from any run, carries the same key, so the payment service
// returns the first charge instead of making a second.
func PaymentKey(orderID string) string { return "payment:" + orderID }

// retryReserve accepts unknown outcomes except UNAVAILABLE: when inventory
// cannot be reached the caller is told at once instead of queueing on a dead
// dependency (seed 000).
func retryReserve(err error) bool {
	return unknownOutcome(err) && status.Code(err) != codes.Unavailable
}

func (s *Service) reserve(ctx context.Context, rec *Record) (*inventoryv1.Reservation, error) {
	req := &inventoryv1.ReserveStockRequest{OrderId: rec.Order.GetId()}
	for _, l := range rec.Order.GetLines() {
		req.Lines = append(req.Lines, &inventoryv1.Line{Sku: l.GetSku(), Quantity: l.GetQuantity()})
	}
	var res *inventoryv1.Reservation
	err := s.retry(ctx, retryReserve, func(ctx context.Context) (err error) {
		res, err = s.inv.ReserveStock(ctx, req)
		return err
	})
	return res, err
}

func (s *Service) charge(ctx context.Context, rec *Record) (*paymentv1.Payment, error) {
	req := &paymentv1.CreatePaymentRequest{
		OrderId:       rec.Order.GetId(),
		Amount:        rec.Order.GetTotal(),
		PaymentMethod: rec.Order.GetPaymentMethod(),
	}
	ctx = callmeta.WithIdempotencyKey(ctx, PaymentKey(rec.Order.GetId()))
	var pay *paymentv1.Payment
	err := s.retry(ctx, unknownOutcome, func(ctx context.Context) (err error) {
		pay, err = s.pay.CreatePayment(ctx, req)
		return err
	})
	return pay, err
}

func (s *Service) commit(ctx context.Context, rec *Record) error {
	req := &inventoryv1.CommitReservationRequest{Id: rec.Order.GetReservationId()}
	return s.retry(ctx, unknownOutcome, func(ctx context.Context) error {
		_, err := s.inv.CommitReservation(ctx, req)
		return err
	})
}

func (s *Service) release(ctx context.Context, reservationID string) error {
	req := &inventoryv1.ReleaseReservationRequest{Id: reservationID}
	return s.retry(ctx, unknownOutcome, func(ctx context.Context) error {
		_, err := s.inv.ReleaseReservation(ctx, req)
		return err
	})
}

// refund gives a payment back. A payment that was never captured has
// nothing to give back, which counts as done.
func (s *Service) refund(ctx context.Context, paymentID string) error {
	req := &paymentv1.RefundPaymentRequest{Id: paymentID}
	err := s.retry(ctx, unknownOutcome, func(ctx context.Context) error {
		_, err := s.pay.RefundPayment(ctx, req)
		return err
	})
	if isFailure(err, codes.FailedPrecondition, paymentDomain, payNotCaptured) {
		return nil
	}
	return err
}

// listPayments returns every payment of the order, page after page.
func (s *Service) listPayments(ctx context.Context, orderID string) ([]*paymentv1.Payment, error) {
	var all []*paymentv1.Payment
	req := &paymentv1.ListPaymentsRequest{OrderId: orderID}
	for {
		var resp *paymentv1.ListPaymentsResponse
		err := s.retry(ctx, unknownOutcome, func(ctx context.Context) (err error) {
			resp, err = s.pay.ListPayments(ctx, req)
			return err
		})
		if err != nil {
			return nil, err
		}
		all = append(all, resp.GetPayments()...)
		if req.PageToken = resp.GetNextPageToken(); req.PageToken == "" {
			return all, nil
		}
	}
}

// retry calls fn until it succeeds, fails in a way again does not accept,
// has been tried s.attempts times in total, or the next backoff would
// outlast ctx. Only idempotent calls go through it. There is no per-attempt
// timeout: an attempt may use the whole remaining budget, and per-attempt
// limits belong to the client interceptors the caller dialled with.
func (s *Service) retry(ctx context.Context, again func(error) bool, fn func(context.Context) error) error {
	wait := s.backoff
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil || attempt >= s.attempts || !again(err) || !pause(ctx, wait) {
			return err
		}
		wait = min(2*wait, maxBackoff)
	}
}

// pause waits d and reports true, or reports false at once when ctx would
// end first.
func pause(ctx context.Context, d time.Duration) bool {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
