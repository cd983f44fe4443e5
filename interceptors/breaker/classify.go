package breaker

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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
//   - UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, UNKNOWN, DATA_LOSS: Failure,
//     the upstream is unreachable, too slow or broken.
//   - every other code: Excluded. INVALID_ARGUMENT, NOT_FOUND,
//     ALREADY_EXISTS, FAILED_PRECONDITION, PERMISSION_DENIED,
//     UNAUTHENTICATED, OUT_OF_RANGE, ABORTED, RESOURCE_EXHAUSTED,
//     UNIMPLEMENTED and CANCELED are about the request or the caller.
//
// The interceptor also excludes calls the caller cut short: its context was
// cancelled, or its deadline was shorter than the upstream's timeout (see
// deadline.CallerBound).
func Classify(err error) Outcome {
	if err == nil {
		return Success
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Unknown, codes.DataLoss:
		return Failure
	}
	return Excluded
}
