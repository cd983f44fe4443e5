package order

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
	"github.com/portico-gateway/portico/services/payment"
)

// fakeInventory is an in-memory inventory with the real contract: all-or-
// nothing reservations keyed by order id, idempotent commit and release.
type fakeInventory struct {
	mu      sync.Mutex
	items   map[string]*fakeItem
	byOrder map[string]*inventoryv1.Reservation
	byID    map[string]*inventoryv1.Reservation
}

type fakeItem struct {
	price                     int64
	available, reserved, sold int64
}

func newFakeInventory() *fakeInventory {
	return &fakeInventory{
		items: map[string]*fakeItem{
			"keyboard-001": {price: 4999, available: 100},
			"mouse-001":    {price: 2499, available: 200},
		},
		byOrder: map[string]*inventoryv1.Reservation{},
		byID:    map[string]*inventoryv1.Reservation{},
	}
}

func invErr(c codes.Code, reason string, md ...string) error {
	return rpcerr.New(c, inventoryDomain, reason, "inventory: "+reason, md...)
}

func (f *fakeInventory) setStock(sku string, price, available int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items[sku] = &fakeItem{price: price, available: available}
}

func (f *fakeInventory) item(sku string) fakeItem {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.items[sku]
}

func (f *fakeInventory) reservation(orderID string) *inventoryv1.Reservation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return proto.Clone(f.byOrder[orderID]).(*inventoryv1.Reservation)
}

func (f *fakeInventory) ReserveStock(_ context.Context, req *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.byOrder[req.GetOrderId()]; ok {
		return proto.Clone(r).(*inventoryv1.Reservation), nil
	}
	res := &inventoryv1.Reservation{Id: fmt.Sprintf("res-%d", len(f.byID)+1), OrderId: req.GetOrderId(), State: inventoryv1.Reservation_STATE_ACTIVE}
	for _, l := range req.GetLines() {
		it, ok := f.items[l.GetSku()]
		if !ok {
			return nil, invErr(codes.NotFound, invItemNotFound, "sku", l.GetSku())
		}
		if it.available < int64(l.GetQuantity()) {
			return nil, invErr(codes.FailedPrecondition, invInsufficientStock, "sku", l.GetSku(),
				"requested", strconv.Itoa(int(l.GetQuantity())), "available", strconv.FormatInt(it.available, 10))
		}
		res.Lines = append(res.Lines, &inventoryv1.ReservedLine{Sku: l.GetSku(), Quantity: l.GetQuantity(),
			UnitPrice: &typev1.Money{AmountMinor: it.price, Currency: "USD"}})
	}
	for _, l := range req.GetLines() {
		it := f.items[l.GetSku()]
		it.available -= int64(l.GetQuantity())
		it.reserved += int64(l.GetQuantity())
	}
	f.byOrder[req.GetOrderId()], f.byID[res.GetId()] = res, res
	return proto.Clone(res).(*inventoryv1.Reservation), nil
}

func (f *fakeInventory) CommitReservation(_ context.Context, req *inventoryv1.CommitReservationRequest) (*inventoryv1.Reservation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.byID[req.GetId()]
	switch {
	case !ok:
		return nil, invErr(codes.NotFound, "RESERVATION_NOT_FOUND")
	case r.State == inventoryv1.Reservation_STATE_RELEASED:
		return nil, invErr(codes.FailedPrecondition, invReservationReleased, "id", r.Id)
	case r.State == inventoryv1.Reservation_STATE_ACTIVE:
		f.move(r, func(it *fakeItem, q int64) { it.reserved -= q; it.sold += q })
		r.State = inventoryv1.Reservation_STATE_COMMITTED
	}
	return proto.Clone(r).(*inventoryv1.Reservation), nil
}

func (f *fakeInventory) ReleaseReservation(_ context.Context, req *inventoryv1.ReleaseReservationRequest) (*inventoryv1.Reservation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.byID[req.GetId()]
	switch {
	case !ok:
		return nil, invErr(codes.NotFound, "RESERVATION_NOT_FOUND")
	case r.State == inventoryv1.Reservation_STATE_COMMITTED:
		return nil, invErr(codes.FailedPrecondition, invReservationCommitted, "id", r.Id)
	case r.State == inventoryv1.Reservation_STATE_ACTIVE:
		f.releaseLocked(r)
	}
	return proto.Clone(r).(*inventoryv1.Reservation), nil
}

// expire releases an order's active reservation, as the TTL sweep does.
func (f *fakeInventory) expire(orderID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.byOrder[orderID]; ok && r.State == inventoryv1.Reservation_STATE_ACTIVE {
		f.releaseLocked(r)
	}
}

func (f *fakeInventory) releaseLocked(r *inventoryv1.Reservation) {
	f.move(r, func(it *fakeItem, q int64) { it.reserved -= q; it.available += q })
	r.State = inventoryv1.Reservation_STATE_RELEASED
}

func (f *fakeInventory) move(r *inventoryv1.Reservation, fn func(*fakeItem, int64)) {
	for _, l := range r.GetLines() {
		fn(f.items[l.GetSku()], int64(l.GetQuantity()))
	}
}

// fakePayments is an in-memory payment service with the real contract:
// CreatePayment needs an idempotency key and replays the first result.
type fakePayments struct {
	mu    sync.Mutex
	byKey map[string]*paymentv1.Payment
	reqs  map[string]*paymentv1.CreatePaymentRequest
	all   []*paymentv1.Payment
	keys  map[string]int // idempotency key -> CreatePayment calls carrying it
}

func newFakePayments() *fakePayments {
	return &fakePayments{byKey: map[string]*paymentv1.Payment{}, reqs: map[string]*paymentv1.CreatePaymentRequest{}, keys: map[string]int{}}
}

func payErr(c codes.Code, reason string) error {
	return rpcerr.New(c, paymentDomain, reason, "payment: "+reason)
}

func (f *fakePayments) CreatePayment(ctx context.Context, req *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
	key := callmeta.IdempotencyKeyFromIncoming(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if key == "" {
		return nil, payErr(codes.InvalidArgument, "IDEMPOTENCY_KEY_MISSING")
	}
	if a := req.GetAmount().GetAmountMinor(); a < 1 || a > payment.MaxAmountMinor {
		return nil, status.Error(codes.InvalidArgument, "invalid amount.amount_minor") // BadRequest only, as the real one
	}
	f.keys[key]++
	if p, ok := f.byKey[key]; ok {
		if !proto.Equal(f.reqs[key], req) {
			return nil, payErr(codes.FailedPrecondition, "IDEMPOTENCY_KEY_REUSED")
		}
		return proto.Clone(p).(*paymentv1.Payment), nil
	}
	p := &paymentv1.Payment{Id: fmt.Sprintf("pay-%d", len(f.all)+1), OrderId: req.GetOrderId(),
		Amount: req.GetAmount(), PaymentMethod: req.GetPaymentMethod(), Status: paymentv1.Payment_STATUS_CAPTURED}
	switch req.GetPaymentMethod() {
	case "pm_card_ok":
	case "pm_card_declined":
		p.Status, p.FailureReason = paymentv1.Payment_STATUS_DECLINED, "CARD_DECLINED"
	case "pm_card_insufficient_funds":
		p.Status, p.FailureReason = paymentv1.Payment_STATUS_DECLINED, payInsufficientFunds
	default:
		return nil, payErr(codes.InvalidArgument, "UNKNOWN_PAYMENT_METHOD")
	}
	f.byKey[key], f.reqs[key] = p, proto.Clone(req).(*paymentv1.CreatePaymentRequest)
	f.all = append(f.all, p)
	return proto.Clone(p).(*paymentv1.Payment), nil
}

func (f *fakePayments) RefundPayment(_ context.Context, req *paymentv1.RefundPaymentRequest) (*paymentv1.Payment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.all {
		if p.GetId() != req.GetId() {
			continue
		}
		switch p.Status {
		case paymentv1.Payment_STATUS_DECLINED:
			return nil, payErr(codes.FailedPrecondition, payNotCaptured)
		case paymentv1.Payment_STATUS_CAPTURED:
			p.Status = paymentv1.Payment_STATUS_REFUNDED
		}
		return proto.Clone(p).(*paymentv1.Payment), nil
	}
	return nil, payErr(codes.NotFound, "PAYMENT_NOT_FOUND")
}

// ListPayments answers one payment per page (the token is the index of the
// next one), so every caller must follow next_page_token.
func (f *fakePayments) ListPayments(_ context.Context, req *paymentv1.ListPaymentsRequest) (*paymentv1.ListPaymentsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var mine []*paymentv1.Payment
	for _, p := range f.all {
		if p.GetOrderId() == req.GetOrderId() {
			mine = append(mine, p)
		}
	}
	from, _ := strconv.Atoi(req.GetPageToken())
	resp := &paymentv1.ListPaymentsResponse{}
	if from < len(mine) {
		resp.Payments = []*paymentv1.Payment{proto.Clone(mine[from]).(*paymentv1.Payment)}
	}
	if from+1 < len(mine) {
		resp.NextPageToken = strconv.Itoa(from + 1)
	}
	return resp, nil
}

// charges returns the payments of orderID that took money (captured, or
// captured and since refunded).
func (f *fakePayments) charges(orderID string) (captured, refunded int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.all {
		if p.GetOrderId() != orderID {
			continue
		}
		switch p.GetStatus() {
		case paymentv1.Payment_STATUS_CAPTURED:
			captured++
		case paymentv1.Payment_STATUS_REFUNDED:
			refunded++
		}
	}
	return captured, refunded
}

// count returns how many payments exist and how many CreatePayment calls
// carried key.
func (f *fakePayments) count(key string) (payments, calls int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.all), f.keys[key]
}
