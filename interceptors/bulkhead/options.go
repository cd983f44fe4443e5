package bulkhead

import "time"

// Defaults.
const (
	DefaultMax     = 100
	DefaultQueue   = 20
	DefaultMaxWait = 50 * time.Millisecond
)

// Observer receives what the bulkhead does. Implementations must be safe for
// concurrent use and fast: InFlight runs twice per call.
type Observer interface {
	// Overloaded is called for each call the bulkhead rejects.
	Overloaded(upstream string)
	// InFlight is called with +1 when a call takes a slot and -1 when it
	// gives it back.
	InFlight(upstream string, delta int)
}

// Option configures UnaryClientInterceptor.
type Option func(*options)

type options struct {
	upstream string
	max      int
	queue    int
	maxWait  time.Duration
	observer Observer
}

// WithUpstream names the upstream in errors and for the Observer.
func WithUpstream(name string) Option {
	return func(o *options) { o.upstream = name }
}

// WithLimits sets the slots, the queue length and the longest queue wait.
// max zero means 100 and negative means 1. queue zero means 20 and negative
// means no queue. maxWait zero means 50ms and negative means no waiting (the
// queue is then useless).
func WithLimits(max, queue int, maxWait time.Duration) Option {
	return func(o *options) {
		switch {
		case max > 0:
			o.max = max
		case max < 0:
			o.max = 1
		}
		switch {
		case queue > 0:
			o.queue = queue
		case queue < 0:
			o.queue = 0
		}
		switch {
		case maxWait > 0:
			o.maxWait = maxWait
		case maxWait < 0:
			o.maxWait = 0
		}
	}
}

// WithObserver sets where rejections and in-flight changes are reported.
func WithObserver(obs Observer) Option {
	return func(o *options) { o.observer = obs }
}

type nopObserver struct{}

func (nopObserver) Overloaded(string)    {}
func (nopObserver) InFlight(string, int) {}
