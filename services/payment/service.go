package payment

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/gen/portico/type/v1/reasons"
	"github.com/portico-gateway/portico/internal/pagetoken"
)

// Test payment methods; see the package doc for their results.
const (
	MethodCardOK                = "pm_card_ok"
	MethodCardDeclined          = "pm_card_declined"
	MethodCardInsufficientFunds = "pm_card_insufficient_funds"
)

// Failure reasons of a DECLINED payment: portico.type.v1.Reason values
// (which alone spell them), as package reasons' constants.
const (
	failureCardDeclined      = reasons.CardDeclined
	failureInsufficientFunds = reasons.InsufficientFunds
)

// outcome is what a test payment method does to every charge.
type outcome struct {
	status Status
	reason string
}

var methods = map[string]outcome{
	MethodCardOK:                {StatusCaptured, ""},
	MethodCardDeclined:          {StatusDeclined, failureCardDeclined},
	MethodCardInsufficientFunds: {StatusDeclined, failureInsufficientFunds},
}

// Service implements paymentv1.PaymentServiceServer on a Store.
type Service struct {
	paymentv1.UnimplementedPaymentServiceServer

	store      Store
	log        *slog.Logger
	pageSecret []byte
	pages      *pagetoken.Codec
}

var _ paymentv1.PaymentServiceServer = (*Service)(nil)

// Option configures a Service.
type Option func(*Service)

// WithLogger sets where store failures are logged. nil means discard.
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// WithPageTokenSecret signs ListPayments page tokens under secret (at
// least pagetoken.MinSecretLen bytes), which replicas share. nil means a
// secret per process.
func WithPageTokenSecret(secret []byte) Option { return func(s *Service) { s.pageSecret = secret } }

// New returns a Service on store.
func New(store Store, opts ...Option) (*Service, error) {
	if store == nil {
		return nil, errors.New("payment: nil Store")
	}
	s := &Service{store: store}
	for _, o := range opts {
		o(s)
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	const list = "portico.payment.v1.PaymentService/ListPayments"
	var err error
	if s.pages, err = pagetoken.NewOrRandom(s.pageSecret, list); err != nil {
		return nil, err
	}
	return s, nil
}

// newID returns "pay-" followed by 20 random hex digits (80 bits).
func newID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b) // never fails (crypto/rand documents it panics instead)
	return "pay-" + hex.EncodeToString(b)
}
