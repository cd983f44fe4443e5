// Package interceptors builds Portico's gRPC client chain: one
// grpc.ClientConn per upstream, wrapped in the layers that keep a failing
// upstream's trouble bounded: when a dependency is down, callers fail fast
// with an honest status instead of piling up. Each concern is a package of its own: deadline,
// bulkhead, breaker, retry, balance (service config, addresses, ejection),
// faults (server-side drills) and metrics.
//
// # The chain
//
// A call passes the layers outermost first and its result comes back
// through them in reverse:
//
//	caller
//	  │
//	┌─▼───────────────────────────────────────────────────────────────┐
//	│ trace     forwards traceparent (+ x-trace-id, a readable id)    │
//	│ ┌─▼───────────────────────────────────────────────────────────┐ │
//	│ │ deadline  min(caller's budget, timeout); too little: fail   │ │
//	│ │ ┌─▼───────────────────────────────────────────────────────┐ │ │
//	│ │ │ bulkhead  a slot, or a short wait, or OVERLOADED        │ │ │
//	│ │ │ ┌─▼───────────────────────────────────────────────────┐ │ │ │
//	│ │ │ │ breaker   CIRCUIT_OPEN while open; one verdict/call │ │ │ │
//	│ │ │ │ ┌─▼───────────────────────────────────────────────┐ │ │ │ │
//	│ │ │ │ │ retry     attempts 1..n, backoff, budget,       │ │ │ │ │
//	│ │ │ │ │           per-attempt deadline                  │ │ │ │ │
//	│ │ │ │ │ ┌─▼───────────────────────────────────────────┐ │ │ │ │ │
//	│ │ │ │ │ │ eject     per-attempt peer outcome          │ │ │ │ │ │
//	│ │ │ │ │ │ ┌─▼───────────────────────────────────────┐ │ │ │ │ │ │
//	│ │ │ │ │ │ │ grpc-go: balancer picks an instance     │ │ │ │ │ │ │
//	│ │ │ │ │ │ └─────────────────────────────────────────┘ │ │ │ │ │ │
//	│ │ │ │ │ └─────────────────────────────────────────────┘ │ │ │ │ │
//	│ │ │ │ └─────────────────────────────────────────────────┘ │ │ │ │
//	│ │ │ └─────────────────────────────────────────────────────┘ │ │ │
//	│ │ └─────────────────────────────────────────────────────────┘ │ │
//	│ └─────────────────────────────────────────────────────────────┘ │
//	└─────────────────────────────────────────────────────────────────┘
//
// The order is part of the API. build (behind Layers, NewUpstream and Dial)
// is the only place it is decided, and Example_order runs a call through it.
// Both client roles use it: a service calling another (cmd/portico's
// dialService) and the REST edge (gateway.NewUpstream, which adds only a
// stats handler and runs the chain with NoTimeout, because its route
// deadline binds). Nothing outside the chain adds an interceptor.
// Connections whose traffic must stay out of the breakers and retries (the
// edge's /health probes and server reflection, gateway.Dial) are built by
// the same function WithoutResilience: trace and identity only, over the
// same transport (credentials, reconnect backoff, balancer, resolver).
// Why each layer sits where it does:
//
//   - trace is outermost: it appends the trace id to the metadata once, and
//     every attempt below, retries included, carries it.
//   - identity (only WithIdentity) comes right after it: one assertion per
//     call, beside the trace id, carried by every attempt (package
//     identity). It mints in about a microsecond, so nothing is cached.
//   - deadline fixes the call's one budget before anything can wait, so time
//     spent queueing in the bulkhead and backing off between attempts counts
//     against it; a call that cannot finish fails before it takes a slot; and
//     it sees the final error, after every attempt, to add UPSTREAM_TIMEOUT
//     {"hop": upstream}.
//   - bulkhead guards the caller's own goroutines and connections, so it
//     bounds everything below it, breaker probes and retries included. A
//     call it refuses is local congestion, not upstream health, and being
//     outside the breaker it can never trip it. Its queue wait is short
//     (50ms by default), so a call queued when the breaker opens learns
//     CIRCUIT_OPEN soon after.
//   - breaker sits outside retry: it judges the call the caller made, one
//     verdict after all attempts, so "2 consecutive failures" counts what
//     the caller saw. While open nothing below
//     runs, so no attempt and no retry budget is spent. Amplification by
//     retries is capped by the retry budget, not by the breaker.
//   - For an upstream of several instances (Addresses, or a dns:/// target
//     Portico resolves) each instance has a breaker of its own too,
//     "<upstream>@<addr>", below the balancer's pick: the eject layer
//     feeds it each attempt's outcome by the address the attempt went to
//     (grpc.Peer), and while it is open the instance is out of the
//     resolver's list, so the balancer picks the others. One instance that
//     hangs or fails (a host cut off) opens its own breaker, never the
//     upstream's: the upstream's breaker then counts only failures no
//     instance took (no connection ready anywhere), and the breaker layer
//     refuses calls at once with CIRCUIT_OPEN while every instance's
//     breaker is open, counting each refusal against the upstream's
//     breaker, which so opens too. When all instances fail, calls still
//     fail fast and the upstream's breaker is open, as with one instance.
//     With a single address the instance's breaker stays idle and the
//     upstream's judges every call, as before. A per-attempt timeout (RetryConfig.AttemptTimeout)
//     makes a hanging instance cost one attempt, retried on another.
//   - retry is inside everything that must happen once per call, and holds
//     the per-attempt deadline itself: only the loop can tell its own
//     per-attempt timeout (retried) from a DEADLINE_EXCEEDED sent by the
//     server (not retried). It never retries the local fast-fails above it
//     (they cannot reach it) or below a deeper Portico hop (CIRCUIT_OPEN,
//     OVERLOADED, DEADLINE_BUDGET_EXHAUSTED).
//   - eject is innermost because it judges instances, and each attempt may
//     go to a different one: ejection and the instances' breakers. It
//     exists only for upstreams Portico resolves (Addresses, dns:///).
//
// # Per-call state
//
// The layers of one call share one call.State (package call), made by
// the chain's top and put in the call's context once: who owns the
// deadline that binds the call (deadline writes it, retry changes it for
// an attempt whose own timeout comes first, breaker and eject read it to
// leave the caller's doing out), the attempt running (retry), and the
// instance that took the last attempt and whether its breaker judged it
// (eject writes it, breaker reads it). No layer reads another's private
// context value or writes back through a call option. The chain's one
// input from its caller besides the deadline is
// deadline.WithUpstreamDeadline, the edge's mark that a route deadline is
// the upstream's budget.
//
// # Streams
//
// A connection's streams go through three layers, breaker, retry and
// eject (Layer.Stream; the other layers have none):
//
//   - breaker: a stream setup is one call on the same breakers as unary
//     calls, its outcome decided at the first RecvMsg (a message or a clean
//     end: success; an error before it: classified as a unary error); an
//     error after the first message does not count. An open breaker refuses
//     the setup with the unary CIRCUIT_OPEN error. A failed setup that an
//     instance took is left to that instance's breaker (below), as for
//     unary attempts.
//   - eject: each setup attempt, decided at its first RecvMsg like the
//     breaker's, counts toward the ejection and the breaker of the
//     instance it went to (balance.Resolver.StreamClientInterceptor).
//   - retry: a server stream is retried only before its first message, for
//     the codes, attempts, idempotency and budget of unary calls, the
//     request replayed; never after a message arrived.
//   - bulkhead: none. A slot held for a stream's life would let long watches
//     starve the upstream's unary calls; a slot held only until the first
//     message would bound setups, which the breaker already guards. The
//     edge caps open streams itself (gateway streams.max_open,
//     max_per_caller).
//   - deadline, trace, identity: none; the edge bounds a stream by its
//     max_duration and idle timeout and adds trace and identity metadata
//     itself.
//
// # Configuration
//
// Config is one upstream's settings, YAML-friendly, with one zero rule
// (stated on Config): zero or absent means the default. Defaults spells
// them all out. The gateway's config embeds Config as an upstream's
// resilience block. WithConfig(cfg) applies it, first; the With...
// options after it set single fields. NewUpstream and Dial validate everything up front and name each
// bad field (*FieldError, e.g. "retry.max_attempts: must be at least 1").
//
// Error reasons are listed in package reason. An Upstream is safe for
// concurrent use and starts no goroutines of its own.
package interceptors
