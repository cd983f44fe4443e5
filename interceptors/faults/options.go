package faults

import "math/rand/v2"

// Option configures UnaryServerInterceptor.
type Option func(*options)

type options struct {
	rand func() float64
}

// WithRand sets the source that decides whether a rule with Rate < 1
// applies, returning values in [0, 1). Default: math/rand/v2.Float64.
func WithRand(f func() float64) Option {
	return func(o *options) { o.rand = f }
}

func newOptions(opts []Option) *options {
	o := &options{rand: rand.Float64}
	for _, opt := range opts {
		opt(o)
	}
	return o
}
