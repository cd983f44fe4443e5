package faults

import (
	"math/rand/v2"

	"github.com/portico-gateway/portico/interceptors/clock"
)

// Option configures UnaryServerInterceptor.
type Option func(*options)

type options struct {
	rand  func() float64
	clock clock.Clock
}

// WithRand sets the source that decides whether a rule with Rate < 1
// applies, returning values in [0, 1). Default: math/rand/v2.Float64.
func WithRand(f func() float64) Option {
	return func(o *options) { o.rand = f }
}

// WithClock sets the clock that times delays. Default: the real clock.
func WithClock(c clock.Clock) Option {
	return func(o *options) { o.clock = c }
}

func newOptions(opts []Option) *options {
	o := &options{rand: rand.Float64, clock: clock.Real()}
	for _, opt := range opts {
		opt(o)
	}
	return o
}
