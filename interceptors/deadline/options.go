package deadline

import "time"

// Option configures the interceptors of this package.
type Option func(*options)

type options struct {
	upstream  string
	timeout   time.Duration
	methods   map[string]time.Duration
	minBudget time.Duration
}

func newOptions(opts []Option) *options {
	o := &options{upstream: "upstream"}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// WithUpstream names the upstream in error metadata ("upstream", "hop").
func WithUpstream(name string) Option {
	return func(o *options) { o.upstream = name }
}

// WithTimeout bounds every call to the upstream. Zero or negative means no
// bound of its own: the caller's deadline alone applies.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithMethodTimeout bounds calls to one full method
// ("/portico.order.v1.OrderService/CreateOrder") instead of WithTimeout.
// Zero or negative means no bound of its own for that method.
func WithMethodTimeout(method string, d time.Duration) Option {
	return func(o *options) {
		if o.methods == nil {
			o.methods = make(map[string]time.Duration)
		}
		o.methods[method] = d
	}
}

// WithMinBudget makes calls with less than d left before the caller's
// deadline fail locally. Zero means only calls whose deadline has passed.
func WithMinBudget(d time.Duration) Option {
	return func(o *options) { o.minBudget = d }
}
