// Package breaker is a circuit breaker per upstream (and per method where
// configured), so an upstream that keeps failing is left alone to recover
// instead of being sent every new call to prove it is still down.
//
// # Instances
//
// For an upstream of several instances, breakers are also kept per
// instance, below the balancer's pick (balance.WithBreakers), and the
// interceptor works with them through WithInstances: it refuses calls while
// every instance's breaker is open (Instances.Blocked), and its own
// breakers count only the failures no instance took (the call's state,
// package call, written by the layer that sees each attempt's peer, tells
// which).
// Record counts such a call, whose breaker is known only once it ran.
//
// # States
//
//   - Closed: calls pass. The circuit opens after ConsecutiveFailures
//     failures in a row (default 2), or when over a rolling Window (default
//     10s, in BucketPeriod steps of 1s) at least MinCalls calls (20) finished
//     and FailureRate of them (0.5) failed.
//   - Open: calls fail at once for CoolDown (default 800ms) with
//     UNAVAILABLE, ErrorInfo reason CIRCUIT_OPEN, metadata {upstream,
//     retryAfterMs} and a RetryInfo with the rest of the cool-down.
//   - Half-open: at most MaxRequests probes (default 1) are admitted at a
//     time; a call arriving while every slot is taken gets CIRCUIT_OPEN too.
//     MaxRequests successes in a row close the circuit, one failure reopens
//     it for a fresh cool-down.
//
// Each transition starts a new generation; a result reported for a call
// admitted in an earlier generation is dropped (as in gobreaker), so a slow
// call from before the circuit opened cannot close or reopen it.
//
// # What counts
//
// Only evidence about the upstream's health (Classify): UNAVAILABLE,
// DEADLINE_EXCEEDED, INTERNAL, UNKNOWN and DATA_LOSS are failures; a call
// slower than SlowCallThreshold is a failure whatever it returned. Outcomes
// the caller caused never count: client errors (INVALID_ARGUMENT,
// NOT_FOUND, FAILED_PRECONDITION, PERMISSION_DENIED, ALREADY_EXISTS, ...),
// a cancelled caller, and a DEADLINE_EXCEEDED under a deadline the caller set
// shorter than the upstream's timeout (call.CallerCaused). An excluded
// half-open probe gives its slot back.
//
// # Why not sony/gobreaker
//
// Portico's breaker follows gobreaker v2's shape: a Settings struct whose
// zero value works, the State names and numbering, the two sentinel errors
// ErrOpenState and ErrTooManyRequests, IsSuccessful and IsExcluded, the
// generation counter and the two-step Allow() (done func(error), error). It
// is not built on gobreaker v2.4.0 because that version hides the open
// state's expiry, which CIRCUIT_OPEN's RetryInfo needs; failsafe-go v0.9.8's
// circuitbreaker runs calls through its own executor. A state machine of
// about 400 lines was the smaller dependency. It reads the time package
// directly; tests drive cool-downs and windows with testing/synctest.
//
// # Concurrency
//
// A Breaker is safe for concurrent use: one mutex guards its state and is
// held for a few comparisons per call; the interceptor's path (Admit, Done)
// allocates only when the state changes. OnStateChange and the Observer run after the lock is
// released, possibly concurrently for different transitions.
package breaker
