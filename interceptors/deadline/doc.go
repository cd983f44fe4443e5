// Package deadline gives every outgoing call a deadline and tells the caller
// which hop ran out of time.
//
// UnaryClientInterceptor sets the deadline of each call to
//
//	min(the caller's remaining budget, the method's timeout or the upstream's timeout)
//
// so deadlines only shrink on their way down (the edge sets the first one).
// A call whose caller has less than the minimum budget left fails locally
// with DEADLINE_EXCEEDED and the ErrorInfo reason DEADLINE_BUDGET_EXHAUSTED
// (metadata "upstream") before it touches the network: a call that cannot
// finish in time only adds load to an upstream that is already slow.
//
// When a call fails with DEADLINE_EXCEEDED and the error carries no ErrorInfo
// yet, the interceptor adds one with reason UPSTREAM_TIMEOUT and metadata
// {"hop": <upstream>}. An ErrorInfo set further down is kept, so the edge
// reports the deepest hop that ran out of time (order -> inventory reads
// "hop": "inventory" at the gateway).
//
// The interceptor records in the call's state (package call) who owns the
// deadline that binds it: the caller, when its deadline is sooner than the
// upstream's timeout and not marked WithUpstreamDeadline, or the upstream.
// A breaker uses this (call.CallerCaused) to tell "the upstream was too
// slow" from "the caller gave it too little time" (see package breaker).
//
// UnaryServerInterceptor rejects work whose deadline has already passed (or
// has less than the minimum budget left) with DEADLINE_EXCEEDED, reason
// DEADLINE_BUDGET_EXHAUSTED, before the handler runs.
//
// Defaults: no timeout of its own (the caller's deadline only), no minimum
// budget, upstream name "upstream". Both interceptors are
// safe for concurrent use and start no goroutines.
package deadline
