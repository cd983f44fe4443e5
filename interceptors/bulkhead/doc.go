// Package bulkhead caps the calls in flight to one upstream, so a slow
// upstream ties up a bounded share of the caller's goroutines, connections
// and memory instead of all of them.
//
// Up to Max calls run at once. The next Queue calls wait, each at most
// MaxWait (and never past its own deadline), for a slot; calls beyond that,
// and waiters whose wait runs out, fail at once with UNAVAILABLE, reason
// OVERLOADED, metadata {upstream, retryAfterMs} and a RetryInfo of MaxWait
// (at least 1ms). A caller that cancels while queued gets CANCELLED.
//
// The slots are a buffered channel and the queue an atomic counter: the
// happy path is one non-blocking channel send and receive, no lock, no
// allocation. No goroutine is started, so the number of goroutines never
// grows beyond the callers'.
//
// Streams take no slot (there is no stream interceptor): a long-lived
// stream holding one would starve the upstream's unary calls; the edge
// caps open streams itself.
//
// Defaults: Max 100, Queue 20, MaxWait 50ms. Safe for
// concurrent use.
package bulkhead
