package order

import (
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portico-gateway/portico/internal/pagetoken"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// Defaults of the options.
const (
	// DefaultReconcileInterval is how often the reconciler runs
	// (Config.ReconcileInterval, portico order --reconcile-interval).
	DefaultReconcileInterval = 2 * time.Second
	// DefaultReconcileAfter is how old a PENDING order must be before the
	// reconciler takes it over.
	DefaultReconcileAfter = 5 * time.Second
	// DefaultBudget bounds a saga run when the call carries no deadline, and
	// each order's run inside Reconcile.
	DefaultBudget = 10 * time.Second
	// DefaultReconcileRounds is how many Reconcile rounds in a row may leave
	// one order PENDING before the reconciler logs it at ERROR and backs off.
	// At DefaultReconcileInterval (2s) that is about 40s, well inside the
	// inventory's 5m reservation TTL.
	DefaultReconcileRounds = 20
	// DefaultReconcileBackoff is the first wait once an order has used its
	// rounds; it doubles per further round, up to an hour.
	DefaultReconcileBackoff = time.Minute
	// DefaultWatchPoll is how often a WatchOrder call reads its order from
	// the store between changes this process saw: the longest a change made
	// by another replica takes to reach a watch.
	DefaultWatchPoll = time.Second
	// DefaultMaxAccepted bounds the orders ACCEPTED for later (waiting for
	// inventory) at once; past it CreateOrder answers UNAVAILABLE as
	// without the preference.
	DefaultMaxAccepted = 1000
	// DefaultMaxAcceptedPerCustomer bounds one customer's orders ACCEPTED
	// at once, so one customer cannot fill DefaultMaxAccepted and lock
	// everyone else out.
	DefaultMaxAcceptedPerCustomer = 20
)

type settings struct {
	log            *slog.Logger
	reconcileAfter time.Duration
	budget         time.Duration
	// reconcileRounds and reconcileBackoff: see WithReconcileRounds.
	reconcileRounds  int
	reconcileBackoff time.Duration
	tp               *telemetry.Provider // nil: no reconciler spans
	metrics          *reconcileMetrics   // nil: no metrics
	pages            *pagetoken.Codec    // ListOrders page tokens
	watchPoll        time.Duration       // WatchOrder's store poll: WithWatchPoll
	maxAccepted      int                 // WithMaxAccepted; 0: none
	maxPerCustomer   int                 // WithMaxAcceptedPerCustomer; 0: none
}

func defaultSettings() settings {
	return settings{
		log:            slog.New(slog.DiscardHandler),
		reconcileAfter: DefaultReconcileAfter,
		budget:         DefaultBudget,

		reconcileRounds:  DefaultReconcileRounds,
		reconcileBackoff: DefaultReconcileBackoff,
		pages:            pagetoken.NewRandom(pageList),
		watchPoll:        DefaultWatchPoll,
		maxAccepted:      DefaultMaxAccepted,
		maxPerCustomer:   DefaultMaxAcceptedPerCustomer,
	}
}

// pageList names ListOrders' page tokens (pagetoken.New).
const pageList = "portico.order.v1.OrderService/ListOrders"

// WithPageTokenSecret signs ListOrders page tokens under secret (at least
// pagetoken.MinSecretLen bytes), which replicas share. nil, the default,
// means a secret per process, so a token works only on the replica that
// made it.
func WithPageTokenSecret(secret []byte) Option {
	return func(s *settings) (err error) {
		if secret == nil {
			return nil // the default
		}
		s.pages, err = pagetoken.New(secret, pageList)
		return err
	}
}

// Option configures a Service.
type Option func(*settings) error

// WithLogger sets the logger for saga and reconciler events. Default: discard.
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) error {
		if l == nil {
			return errors.New("order: WithLogger(nil)")
		}
		s.log = l
		return nil
	}
}

// WithReconcileAfter sets how old (by create time) a PENDING order must be
// before Reconcile drives it. Zero means every PENDING order not being run
// by this process. Default: DefaultReconcileAfter.
func WithReconcileAfter(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 {
			return errors.New("order: negative WithReconcileAfter")
		}
		s.reconcileAfter = d
		return nil
	}
}

// WithBudget sets the time a saga run may take when the incoming call has
// no deadline, and per order in Reconcile. Must be positive. Default:
// DefaultBudget.
func WithBudget(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return errors.New("order: WithBudget must be positive")
		}
		s.budget = d
		return nil
	}
}

// WithReconcileRounds sets how many Reconcile rounds may leave one order
// PENDING (unknown outcomes, a dependency down) before the reconciler logs it
// at ERROR and stops driving it every round: from then on it waits
// WithReconcileBackoff, doubling per round up to an hour. At least 1. Default: DefaultReconcileRounds.
func WithReconcileRounds(n int) Option {
	return func(s *settings) error {
		if n < 1 {
			return errors.New("order: WithReconcileRounds below 1")
		}
		s.reconcileRounds = n
		return nil
	}
}

// WithReconcileBackoff sets the first wait of an order that has used its
// reconcile rounds (WithReconcileRounds). Must be positive. Default:
// DefaultReconcileBackoff.
func WithReconcileBackoff(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return errors.New("order: WithReconcileBackoff must be positive")
		}
		s.reconcileBackoff = d
		return nil
	}
}

// WithMaxAccepted bounds the orders stored ACCEPTED (inventory down, the
// caller prefers respond-async) at once, across every replica of a shared
// store; past it CreateOrder withdraws the order and answers UNAVAILABLE
// as without the preference. 0 accepts none; negative is an error.
// Default: DefaultMaxAccepted.
func WithMaxAccepted(n int) Option {
	return func(s *settings) error {
		if n < 0 {
			return errors.New("order: negative WithMaxAccepted")
		}
		s.maxAccepted = n
		return nil
	}
}

// WithMaxAcceptedPerCustomer bounds the orders of one customer stored
// ACCEPTED at once, across every replica of a shared store, within
// WithMaxAccepted: past it that customer's CreateOrder withdraws the order
// and answers UNAVAILABLE as without the preference, while other customers'
// orders are still accepted. 0 accepts none; negative is an error.
// Default: DefaultMaxAcceptedPerCustomer.
func WithMaxAcceptedPerCustomer(n int) Option {
	return func(s *settings) error {
		if n < 0 {
			return errors.New("order: negative WithMaxAcceptedPerCustomer")
		}
		s.maxPerCustomer = n
		return nil
	}
}

// WithTelemetry sets where the reconciler's spans go (its rounds start
// traces of their own; a request's saga spans follow the request's span
// without it) and the registry its metrics are registered on
// (portico_order_reconcile_*). nil for either means none.
func WithTelemetry(tp *telemetry.Provider, reg prometheus.Registerer) Option {
	return func(s *settings) error {
		s.tp = tp
		if reg == nil {
			return nil
		}
		m, err := newReconcileMetrics(reg)
		s.metrics = m
		return err
	}
}

// WithWatchPoll sets how often WatchOrder re-reads its order from the store
// when this process has seen no change: how late a watch may see a change
// made by another replica (PostgreSQL). Must be positive. Default:
// DefaultWatchPoll.
func WithWatchPoll(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return errors.New("order: WithWatchPoll must be positive")
		}
		s.watchPoll = d
		return nil
	}
}
