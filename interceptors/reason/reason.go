package reason

import (
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/gen/portico/type/v1/reasons"
)

// Domain is the ErrorInfo domain of every error the interceptors make.
const Domain = "interceptors.portico.dev"

// Reasons, with the status code each travels with. Each is a
// portico.type.v1.Reason, whose constant package reasons holds (generated
// from the enum, which alone spells it).
const (
	// BudgetExhausted (DEADLINE_EXCEEDED): too little time was left to
	// start the call; nothing was sent. Metadata: upstream or method,
	// remainingMs.
	BudgetExhausted = reasons.DeadlineBudgetExhausted
	// UpstreamTimeout (DEADLINE_EXCEEDED): the deadline fired while the hop
	// named in metadata "hop" had the call.
	UpstreamTimeout = reasons.UpstreamTimeout
	// CircuitOpen (UNAVAILABLE): the upstream's circuit breaker is open or
	// its half-open probes are all taken. Metadata: upstream, retryAfterMs;
	// a RetryInfo detail carries the same delay.
	CircuitOpen = reasons.CircuitOpen
	// Overloaded (UNAVAILABLE): the upstream's bulkhead is full and its
	// queue too. Metadata: upstream, retryAfterMs; plus RetryInfo.
	Overloaded = reasons.Overloaded
	// FaultInjected (any code): package faults made this error on purpose.
	// Metadata: method.
	FaultInjected = reasons.FaultInjected
)

// LocalFastFail reports whether err carries one of the reasons made locally
// without calling the upstream: BudgetExhausted, CircuitOpen or Overloaded.
func LocalFastFail(err error) bool {
	return IsLocal(Of(err))
}

// IsLocal reports whether r is one of the local fast-fail reasons.
func IsLocal(r string) bool {
	switch r {
	case BudgetExhausted, CircuitOpen, Overloaded:
		return true
	}
	return false
}

// Of returns the reason of err's first ErrorInfo when its domain is Domain,
// or "".
func Of(err error) string {
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) {
		return ""
	}
	for _, d := range se.GRPCStatus().Proto().GetDetails() {
		// Unmarshal only what can be an ErrorInfo: most errors carry one
		// detail at most, and this runs on error paths only.
		if d.MessageIs((*errdetails.ErrorInfo)(nil)) {
			info := new(errdetails.ErrorInfo)
			if d.UnmarshalTo(info) == nil && info.GetDomain() == Domain {
				return info.GetReason()
			}
		}
	}
	return ""
}

// Deliberate reports whether err is an UNAVAILABLE that a live upstream
// sent on purpose: it carries a google.rpc.ErrorInfo (the order service's
// INVENTORY_UNAVAILABLE, a deeper hop's CIRCUIT_OPEN). Such an answer says
// the upstream is up and something behind it is down, so breakers do not
// count it against the upstream and retries do not repeat it. An injected
// fault (FAULT_INJECTED) stands for the bare failure it imitates, so a
// drill exercises the real behaviour, and is not deliberate.
func Deliberate(err error) bool {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unavailable {
		return false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return !(info.GetDomain() == Domain && info.GetReason() == FaultInjected)
		}
	}
	return false
}
