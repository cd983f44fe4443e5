package retry

import (
	"math/rand/v2"
	"time"
)

// Defaults.
const (
	DefaultMaxAttempts        = 3
	DefaultInitialBackoff     = 25 * time.Millisecond
	DefaultMaxBackoff         = 250 * time.Millisecond
	DefaultBudgetRatio        = 0.2
	DefaultBudgetWindow       = 10 * time.Second
	DefaultBudgetMinPerSecond = 3.0
)

// Observer receives what the interceptor does. Implementations must be safe
// for concurrent use and fast: they run on the calling goroutine.
type Observer interface {
	// Retried is called before each retry (not before first attempts).
	Retried(upstream string)
	// RetryBudgetExhausted is called when the budget denies a retry.
	RetryBudgetExhausted(upstream string)
}

// Option configures UnaryClientInterceptor.
type Option func(*options)

type options struct {
	upstream       string
	maxAttempts    int
	initialBackoff time.Duration
	maxBackoff     time.Duration
	attemptTimeout time.Duration
	budgetCfg      budgetSettings
	rand           func() float64
	observer       Observer
}

type budgetSettings struct {
	ratio        float64
	window       time.Duration
	minPerSecond float64
}

func newOptions(opts []Option) *options {
	o := &options{
		upstream:       "upstream",
		maxAttempts:    DefaultMaxAttempts,
		initialBackoff: DefaultInitialBackoff,
		maxBackoff:     DefaultMaxBackoff,
		budgetCfg:      budgetSettings{DefaultBudgetRatio, DefaultBudgetWindow, DefaultBudgetMinPerSecond},
		rand:           rand.Float64,
		observer:       nopObserver{},
	}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// WithUpstream names the upstream for the Observer.
func WithUpstream(name string) Option {
	return func(o *options) { o.upstream = name }
}

// WithMaxAttempts sets the number of attempts in total, the first included.
// Values below 1 mean 1: no retries.
func WithMaxAttempts(n int) Option {
	return func(o *options) { o.maxAttempts = max(n, 1) }
}

// WithBackoff sets gRFC A6 backoff: before retry n the interceptor waits a
// random time in [0, min(initial*2^(n-1), max)). Zero or negative values
// keep the defaults (25ms, 250ms).
func WithBackoff(initial, maxBackoff time.Duration) Option {
	return func(o *options) {
		if initial > 0 {
			o.initialBackoff = initial
		}
		if maxBackoff > 0 {
			o.maxBackoff = maxBackoff
		}
	}
}

// WithAttemptTimeout bounds each attempt, inside the caller's deadline. An
// attempt that runs out of this time is retried like UNAVAILABLE. Zero or
// negative means attempts are bounded by the caller's deadline only.
func WithAttemptTimeout(d time.Duration) Option {
	return func(o *options) { o.attemptTimeout = d }
}

// WithBudget sets the retry budget: retries within any window may be at most
// ratio of the calls started in it plus minPerSecond per second of window.
// Zero or negative ratio and window keep the defaults (0.2, 10s); zero
// minPerSecond keeps the default 3 and a negative one means no floor.
func WithBudget(ratio float64, window time.Duration, minPerSecond float64) Option {
	return func(o *options) {
		if ratio > 0 {
			o.budgetCfg.ratio = ratio
		}
		if window > 0 {
			o.budgetCfg.window = window
		}
		if minPerSecond != 0 {
			o.budgetCfg.minPerSecond = max(minPerSecond, 0)
		}
	}
}

// WithRand sets the source of backoff jitter, returning values in [0, 1).
// Default: math/rand/v2.Float64.
func WithRand(f func() float64) Option {
	return func(o *options) { o.rand = f }
}

// WithObserver sets where retries and budget exhaustion are reported.
func WithObserver(obs Observer) Option {
	return func(o *options) { o.observer = obs }
}

type nopObserver struct{}

func (nopObserver) Retried(string)              {}
func (nopObserver) RetryBudgetExhausted(string) {}
