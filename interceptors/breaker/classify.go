package breaker

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/reason"
)

// Outcome is how a finished call counts.
type Outcome int

// Outcomes.
const (
	// Success resets the consecutive failures and counts as a good call.
	Success Outcome = iota
	// Failure is evidence the upstream is unhealthy.
	Failure
	// Excluded counts neither way: the outcome says nothing about the
	// upstream's health.
	Excluded
)

// Classify is the default verdict on a call's error:
//
//   - nil: Success.
//   - UNAVAILABLE carrying a google.rpc.ErrorInfo: Excluded. A live upstream
//     answered on purpose that something behind it is down (the order
//     service's INVENTORY_UNAVAILABLE, or a deeper hop's CIRCUIT_OPEN); the
//     upstream itself is healthy, so its other routes (GET /api/orders while
//     inventory is down) keep working: one dependency's outage never takes
//     down unrelated reads. See reason.Deliberate (an injected
//     fault still counts).
//   - UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, UNKNOWN, DATA_LOSS: Failure,
//     the upstream is unreachable, too slow or broken.
//   - every other code: Excluded. INVALID_ARGUMENT, NOT_FOUND,
//     ALREADY_EXISTS, FAILED_PRECONDITION, PERMISSION_DENIED,
//     UNAUTHENTICATED, OUT_OF_RANGE, ABORTED, RESOURCE_EXHAUSTED,
//     UNIMPLEMENTED and CANCELED are about the request or the caller.
//
// The interceptor also excludes calls the caller cut short: its context was
// cancelled, or its deadline was shorter than the upstream's timeout (see
// call.CallerCaused).
func Classify(err error) Outcome {
	if err == nil {
		return Success
	}
	if reason.Deliberate(err) {
		return Excluded
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Unknown, codes.DataLoss:
		return Failure
	}
	return Excluded
}
