package order

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Service implements orderv1.OrderServiceServer. It is safe for concurrent
// use; see the package documentation for the saga it runs.
type Service struct {
	orderv1.UnimplementedOrderServiceServer
	settings
	store    Store
	inv      Inventory
	pay      Payments
	inflight *inflight
	rounds   *roundBook
	changes  *changes // wakes WatchOrder calls
}

var _ orderv1.OrderServiceServer = (*Service)(nil)

// New returns a Service on store calling inv and pay. Every dependency is
// required; options are validated here.
func New(store Store, inv Inventory, pay Payments, opts ...Option) (*Service, error) {
	if store == nil || inv == nil || pay == nil {
		return nil, errors.New("order: New needs a store, an inventory and a payments client")
	}
	set := defaultSettings()
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("order: nil Option")
		}
		if err := o(&set); err != nil {
			return nil, err
		}
	}
	return &Service{settings: set, store: store, inv: inv, pay: pay, inflight: newInflight(), rounds: newRoundBook(), changes: newChanges()}, nil
}

// caller returns the calling principal or UNAUTHENTICATED.
func caller(ctx context.Context) (callmeta.Principal, error) {
	p, ok := callmeta.PrincipalFromIncoming(ctx)
	if !ok {
		return p, rpcerr.Fail(Domain, typev1.Reason_REASON_UNAUTHENTICATED_CALLER, "no caller identity")
	}
	return p, nil
}

// visible reports whether p may read r: its owner, or a role that sees all.
func visible(p callmeta.Principal, r *Record) bool {
	return p.SeesAll() || r.Order.GetCustomer() == p.Subject
}

func newOrderID() string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return callmeta.OrderIDPrefix + hex.EncodeToString(b[:])
}

// Budget policy. The answer must reach the caller before its deadline, so a
// saga run ends answerSlice(remaining) = min(50ms, 10% of remaining) before
// the incoming deadline; that slice is left for persisting and answering.
const maxAnswerSlice = 50 * time.Millisecond

// persistTimeout bounds one store write. Writes run detached from the
// caller's cancellation: a caller hanging up must not leave a charge
// unrecorded.
const persistTimeout = 5 * time.Second

// runContext returns the context a saga run (or a replay's wait) lives in:
// the incoming deadline minus the answer slice, or s.budget when the call
// has no deadline.
func (s *Service) runContext(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithTimeout(ctx, s.budget)
	}
	return context.WithDeadline(ctx, dl.Add(-answerSlice(time.Until(dl))))
}

func answerSlice(remaining time.Duration) time.Duration {
	return max(0, min(maxAnswerSlice, remaining/10))
}

func persistContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
}
