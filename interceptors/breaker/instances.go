package breaker

import (
	"strconv"
	"time"

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

// WithInstances makes the interceptor work with per-instance breakers:
// calls fail at once with CIRCUIT_OPEN while inst is Blocked (every
// instance's breaker open), and the upstream's breaker (and each method's)
// counts only failures no instance took, such as a call finding no
// connection ready; a failure an instance took is counted by that
// instance's breaker instead. So one bad instance among several opens its
// own breaker, not the upstream's. The layer that sees which instance each
// attempt went to (balance.Resolver's interceptor) says whether the
// instance's breaker judged it in the call's state (call.State.SetInstance).
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
