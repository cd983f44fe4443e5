package payment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/pagebudget"
	"github.com/portico-gateway/portico/internal/protocheck"
	"github.com/portico-gateway/portico/internal/resourcetag"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// createAttempts bounds CreatePayment's transactions: a call that loses the
// race for its idempotency key retries once, to read the winner's payment.
const createAttempts = 2

// CreatePayment charges an order; see the package doc for idempotency.
func (s *Service) CreatePayment(ctx context.Context, req *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
	if err := s.mayMove(ctx); err != nil {
		return nil, err
	}
	key := callmeta.IdempotencyKeyFromIncoming(ctx)
	if err := validateCreate(req, key); err != nil {
		return nil, err
	}
	if err := s.mayMoveFor(ctx, req.GetOrderId(), "charges"); err != nil {
		return nil, err
	}
	hash, err := requestHash(req)
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	var p Payment
	var replayed bool
	for range createAttempts {
		if p, replayed, err = s.create(ctx, req, Key{Key: key, RequestHash: hash}); !errors.Is(err, ErrKeyExists) {
			break
		}
	}
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	if replayed {
		_ = grpc.SetHeader(ctx, metadata.Pairs(callmeta.ReplayedKey, "true")) // fails only outside a gRPC server
	}
	return paymentProto(p), nil
}

// requestHash is the SHA-256 of the deterministic wire form of req.
func requestHash(req *paymentv1.CreatePaymentRequest) ([]byte, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return sum[:], nil
}

// create returns the payment stored under key (replayed), or charges and
// stores a new one. It returns ErrKeyExists when a concurrent call stored
// key first.
func (s *Service) create(ctx context.Context, req *paymentv1.CreatePaymentRequest, key Key) (p Payment, replayed bool, err error) {
	if q, ok := s.store.(quickStore); ok {
		p = s.charge(req)
		if q.QuickCreate(ctx, p, Key{Key: key.Key, RequestHash: key.RequestHash, PaymentID: p.ID}) {
			return p, false, nil
		}
	}
	err = s.store.InTx(ctx, func(tx Tx) error {
		prev, err := tx.Key(ctx, key.Key)
		switch {
		case err == nil && !bytes.Equal(prev.RequestHash, key.RequestHash):
			return keyReused()
		case err == nil:
			replayed = true
			p, err = tx.Payment(ctx, prev.PaymentID)
			return err
		case !errors.Is(err, ErrNotFound):
			return err
		}
		paid, err := tx.Captured(ctx, req.GetOrderId())
		if err != nil {
			return err
		}
		if paid {
			return orderPaid(req.GetOrderId())
		}
		p = s.charge(req)
		key.PaymentID = p.ID
		err = tx.InsertPayment(ctx, p, key)
		if errors.Is(err, ErrOrderPaid) {
			return orderPaid(req.GetOrderId())
		}
		return err
	})
	return p, replayed, err
}

// charge runs the request's test payment method.
func (s *Service) charge(req *paymentv1.CreatePaymentRequest) Payment {
	now := time.Now()
	o := methods[req.GetPaymentMethod()]
	return Payment{
		ID:            newID(),
		OrderID:       req.GetOrderId(),
		Amount:        Money{Minor: req.GetAmount().GetAmountMinor(), Currency: req.GetAmount().GetCurrency()},
		Method:        req.GetPaymentMethod(),
		Status:        o.status,
		FailureReason: o.reason,
		CreateTime:    now,
		UpdateTime:    now,
	}
}

// GetPayment returns one payment.
func (s *Service) GetPayment(ctx context.Context, req *paymentv1.GetPaymentRequest) (*paymentv1.Payment, error) {
	if err := s.mayRead(ctx); err != nil {
		return nil, err
	}
	if err := protocheck.Request(req); err != nil {
		return nil, err
	}
	p, err := s.store.Payment(ctx, req.GetId())
	if errors.Is(err, ErrNotFound) {
		err = paymentNotFound(req.GetId())
	}
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return paymentProto(p), nil
}

// ListPayments returns one page of an order's payments, oldest first, at
// most page_size payments and at most pagebudget.MaxBytes; an order with
// none (or an unknown order) gets an empty list. The page token carries
// the page's last payment id (pagetoken).
func (s *Service) ListPayments(ctx context.Context, req *paymentv1.ListPaymentsRequest) (*paymentv1.ListPaymentsResponse, error) {
	if err := s.mayRead(ctx); err != nil {
		return nil, err
	}
	var v rpcerr.Violations
	if err := protocheck.Check(&v, req); err != nil {
		return nil, err
	}
	size := pagebudget.Size(req.GetPageSize(), defaultPageSize, maxPageSize)
	after, ok := s.pages.Decode(req.GetPageToken())
	if (!ok || after != "" && !protocheck.Valid(&paymentv1.GetPaymentRequest{Id: after})) && !v.Has("page_token") { // one answer for a token too long for its rule
		v.Add("page_token", "is not a token from a previous ListPayments response")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	ps, err := s.store.Payments(ctx, req.GetOrderId(), after, size+1) // one more shows whether a next page exists
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	resp := &paymentv1.ListPaymentsResponse{}
	var more bool
	if resp.Payments, more = pagebudget.Fill(ps, size, paymentProto); more {
		resp.NextPageToken = s.pages.Encode(resp.Payments[len(resp.Payments)-1].GetId())
	}
	return resp, nil
}

// RefundPayment refunds a captured payment in full. With an etag (the
// request's, or the if-match metadata) only if the etag is still the
// payment's, checked on the row the transaction holds: FAILED_PRECONDITION
// (ETAG_MISMATCH) otherwise. A refunded payment is answered as it is.
func (s *Service) RefundPayment(ctx context.Context, req *paymentv1.RefundPaymentRequest) (*paymentv1.Payment, error) {
	if err := s.mayMove(ctx); err != nil {
		return nil, err
	}
	if err := protocheck.Request(req); err != nil {
		return nil, err
	}
	var p Payment
	want := resourcetag.Want(ctx, req.GetEtag())
	err := s.store.InTx(ctx, func(tx Tx) (err error) {
		p, err = tx.Payment(ctx, req.GetId())
		switch {
		case errors.Is(err, ErrNotFound):
			return paymentNotFound(req.GetId())
		case err != nil:
			return err
		case !sagaCaller(ctx) && strings.HasPrefix(p.OrderID, callmeta.OrderIDPrefix):
			return sagaOrder(p.OrderID, "refunds")
		case p.Status == StatusRefunded:
			return nil // done already: the answer whatever the etag (RFC 9110 section 13.1.1)
		case want != "":
			if tag, stale := resourcetag.Stale(want, paymentProto(p)); stale {
				return etagMismatch(p.ID, tag)
			}
		}
		if p.Status != StatusCaptured {
			return notCaptured(p.ID)
		}
		p.Status, p.UpdateTime = StatusRefunded, time.Now()
		return tx.SetStatus(ctx, p.ID, p.Status, p.UpdateTime)
	})
	if err != nil {
		return nil, s.toStatus(ctx, err)
	}
	return paymentProto(p), nil
}

var statusProto = map[Status]paymentv1.Payment_Status{
	StatusCaptured: paymentv1.Payment_STATUS_CAPTURED,
	StatusDeclined: paymentv1.Payment_STATUS_DECLINED,
	StatusRefunded: paymentv1.Payment_STATUS_REFUNDED,
}

// paymentProto is the payment as the service answers it, with its etag
// (resourcetag): every answer and every etag check builds it here.
func paymentProto(p Payment) *paymentv1.Payment {
	return resourcetag.Set(&paymentv1.Payment{
		Id:            p.ID,
		OrderId:       p.OrderID,
		Amount:        &typev1.Money{AmountMinor: p.Amount.Minor, Currency: p.Amount.Currency},
		PaymentMethod: p.Method,
		Status:        statusProto[p.Status],
		FailureReason: p.FailureReason,
		CreateTime:    timestamppb.New(p.CreateTime),
		UpdateTime:    timestamppb.New(p.UpdateTime),
	})
}
