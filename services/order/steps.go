package order

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// PaymentKey is the idempotency key of an order's charge: every attempt,
// from any run or retry, carries the same key, so the payment service
// returns the first charge instead of making a second.
func PaymentKey(orderID string) string { return "payment:" + orderID }

func (s *Service) reserve(ctx context.Context, rec *Record) (_ *inventoryv1.Reservation, err error) {
	ctx, span := telemetry.Start(ctx, "saga reserve")
	defer func() { telemetry.End(span, err) }()
	req := &inventoryv1.ReserveStockRequest{OrderId: rec.Order.GetId()}
	for _, l := range rec.Order.GetLines() {
		req.Lines = append(req.Lines, &inventoryv1.Line{Sku: l.GetSku(), Quantity: l.GetQuantity()})
	}
	return s.inv.ReserveStock(ctx, req)
}

func (s *Service) charge(ctx context.Context, rec *Record) (_ *paymentv1.Payment, err error) {
	ctx, span := telemetry.Start(ctx, "saga charge")
	defer func() { telemetry.End(span, err) }()
	req := &paymentv1.CreatePaymentRequest{
		OrderId:       rec.Order.GetId(),
		Amount:        rec.Order.GetTotal(),
		PaymentMethod: rec.Order.GetPaymentMethod(),
	}
	return s.pay.CreatePayment(callmeta.WithIdempotencyKey(ctx, PaymentKey(rec.Order.GetId())), req)
}

func (s *Service) commit(ctx context.Context, rec *Record) (err error) {
	ctx, span := telemetry.Start(ctx, "saga commit")
	defer func() { telemetry.End(span, err) }()
	req := &inventoryv1.CommitReservationRequest{Id: rec.Order.GetReservationId()}
	_, err = s.inv.CommitReservation(ctx, req)
	return err
}

func (s *Service) release(ctx context.Context, reservationID string) (err error) {
	ctx, span := telemetry.Start(ctx, "saga release")
	defer func() { telemetry.End(span, err) }()
	req := &inventoryv1.ReleaseReservationRequest{Id: reservationID}
	_, err = s.inv.ReleaseReservation(ctx, req)
	return err
}

// refund gives a payment back. A payment that was never captured has
// nothing to give back, which counts as done.
func (s *Service) refund(ctx context.Context, paymentID string) (err error) {
	ctx, span := telemetry.Start(ctx, "saga refund")
	defer func() { telemetry.End(span, err) }()
	req := &paymentv1.RefundPaymentRequest{Id: paymentID}
	_, err = s.pay.RefundPayment(ctx, req)
	if isFailure(err, codes.FailedPrecondition, paymentDomain, payNotCaptured) {
		return nil
	}
	return err
}

// maxPaymentPages bounds the pages listPayments reads: 100, thousands of
// payments at the payment service's page sizes, where an order has one
// charge and, after retries under the same key, still one.
const maxPaymentPages = 100

// listPayments returns every payment of the order, page after page. A
// payment service whose pages do not move on is an error: a page without
// payments that still has a next page token, a token it gave before, or
// more than maxPaymentPages pages.
func (s *Service) listPayments(ctx context.Context, orderID string) ([]*paymentv1.Payment, error) {
	var all []*paymentv1.Payment
	req := &paymentv1.ListPaymentsRequest{OrderId: orderID}
	seen := map[string]bool{}
	for range maxPaymentPages {
		resp, err := s.pay.ListPayments(ctx, req)
		if err != nil {
			return nil, err
		}
		all = append(all, resp.GetPayments()...)
		next := resp.GetNextPageToken()
		switch {
		case next == "":
			return all, nil
		case len(resp.GetPayments()) == 0:
			return nil, errors.New("ListPayments gave an empty page with a next page token")
		case seen[next]:
			return nil, errors.New("ListPayments gave a next page token twice")
		}
		seen[next], req.PageToken = true, next
	}
	return nil, fmt.Errorf("ListPayments gave more than %d pages", maxPaymentPages)
}
