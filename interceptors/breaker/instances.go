package breaker

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Instances is what the interceptor needs from breakers kept per instance,
// below the balancer's pick (balance.Resolver with balance.WithBreakers).
type Instances interface {
	// Blocked returns how long calls must wait because every instance's
	// breaker is open, zero when some instance may take a call.
	Blocked() time.Duration
}

// Attribution is a grpc.CallOption the interceptor adds to each call when
// WithInstances is set. The layer that sees which instance each attempt
// went to (balance.Resolver's interceptor) sets it; the interceptor then
// leaves a failure that an instance took out of the upstream's breaker,
// since that instance's own breaker judges it.
type Attribution struct {
	grpc.EmptyCallOption
	// instance is atomic: a stream's breaker may decide on its context's
	// end while the stream's receiver sets it.
	instance atomic.Bool
	// opts backs the call's options with the Attribution appended, and
	// room for the layers below to append theirs without allocating.
	opts [8]grpc.CallOption
}

// attributions recycles Attributions: a call's is released once the call
// has returned, when grpc-go no longer holds its options.
var attributions = sync.Pool{New: func() any { return new(Attribution) }}

// attribute returns a fresh Attribution and the call's options with it
// appended.
func attribute(callOpts []grpc.CallOption) (*Attribution, []grpc.CallOption) {
	a := attributions.Get().(*Attribution)
	if len(callOpts) >= len(a.opts)-2 {
		return a, append(callOpts[:len(callOpts):len(callOpts)], a)
	}
	opts := append(a.opts[:0], callOpts...)
	return a, append(opts, a)
}

func (a *Attribution) release() {
	a.instance.Store(false)
	a.opts = [8]grpc.CallOption{}
	attributions.Put(a)
}

// SetInstance records whether an instance took the last attempt: false
// when the call found no instance to go to (no connection ready).
func (a *Attribution) SetInstance(took bool) { a.instance.Store(took) }

// FindAttribution returns the Attribution among opts, or nil.
func FindAttribution(opts []grpc.CallOption) *Attribution {
	for i := len(opts) - 1; i >= 0; i-- {
		if a, ok := opts[i].(*Attribution); ok {
			return a
		}
	}
	return nil
}

// WithInstances makes the interceptor work with per-instance breakers:
// calls fail at once with CIRCUIT_OPEN while inst is Blocked (every
// instance's breaker open), and the upstream's breaker (and each method's)
// counts only failures no instance took, such as a call finding no
// connection ready; a failure an instance took is counted by that
// instance's breaker instead. So one bad instance among several opens its
// own breaker, not the upstream's.
func WithInstances(inst Instances) Option {
	return func(o *options) { o.instances = inst }
}

// blocked is the CIRCUIT_OPEN error while every instance's breaker is open.
func blocked(upstream string, after time.Duration) error {
	err := rpcerr.New(codes.Unavailable, reason.Domain, reason.CircuitOpen,
		"the circuit breaker of every instance of "+upstream+" is open",
		"upstream", upstream, "retryAfterMs", strconv.FormatInt(after.Milliseconds(), 10))
	return rpcerr.WithRetryInfo(err, after)
}
