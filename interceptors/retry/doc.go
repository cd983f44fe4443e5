// Package retry retries failed unary calls (and server streams before
// their first message, see ClientInterceptors) that are safe to repeat, inside
// the caller's one deadline and within a retry budget per upstream.
//
// A failed attempt is tried again only when all of these hold:
//
//   - The call is safe to repeat. The proto says so (method option
//     idempotency_level = NO_SIDE_EFFECTS or IDEMPOTENT, read from
//     protoregistry.GlobalFiles and cached per method), or the call carries
//     the metadata "idempotency-key", or its context is marked by
//     WithIdempotent (a caller holding a descriptor the process's
//     registry lacks). Any other method counts as not idempotent.
//   - The failure is transient: UNAVAILABLE; RESOURCE_EXHAUSTED only when the
//     server sent a RetryInfo (pushback); DEADLINE_EXCEEDED only when this
//     package's own per-attempt timeout was set and ran out while the
//     caller still has time (gRFC A6 calls this a per-attempt timeout;
//     Envoy per_try_timeout). A DEADLINE_EXCEEDED the server sends before
//     the attempt's deadline is its answer and is not retried.
//     Errors with the reasons CIRCUIT_OPEN, OVERLOADED or
//     DEADLINE_BUDGET_EXHAUSTED are never retried: they are fast-fails made
//     locally (here or on a deeper Portico hop) and repeating them only
//     repeats the refusal.
//   - Attempts remain. WithMaxAttempts counts attempts in total, the first
//     one included: 3 means one call and at most two retries.
//   - The backoff ends before the deadline. Backoff follows gRFC A6:
//     random(0, min(initial*2^(n-1), max)), or the server's RetryInfo delay
//     when it sent one. A retry whose wait would reach the caller's deadline
//     is skipped and the last error returned at once; every attempt shares
//     the caller's one deadline.
//   - The upstream's retry budget allows it. Over a sliding window (default
//     10s) retries may be at most ratio (default 0.2) of the calls started,
//     plus a floor of minPerSecond (default 3) retries per second of window
//     so a quiet upstream can still retry (Finagle's RetryBudget; Envoy's
//     retry budget and gRPC retryThrottling have the same intent). A
//     100%-failing upstream therefore sees at most (1+ratio) attempts per
//     call plus the floor, whatever WithMaxAttempts says.
//
// A replay marker (callmeta.ReplayedKey, the REST edge's
// Idempotent-Replayed) must mean the caller's own earlier request. After a
// retry, an earlier attempt of this same call may have created what the
// last attempt then found, so the marker is dropped from the answer's
// header (grpc.Header) unless every earlier attempt's answer already
// carried it (the key was known before the call).
//
// Retries add the metadata "x-retry-attempt" (1, 2, ...) as go-grpc-middleware
// does, so servers can tell a retry from a first try.
//
// Why not go-grpc-middleware's retry interceptor: it waits out a backoff
// that ends past the deadline instead of skipping it, has no budget and
// decides by code only.
// This package keeps its shape (options, UnaryClientInterceptor) and its
// metadata key, and implements the loop those semantics need.
//
// Defaults: 3 attempts, backoff 25ms initial and 250ms max, no per-attempt
// timeout, budget ratio 0.2 over 10s with 3 retries/s floor.
// The interceptor is safe for concurrent use; it starts no goroutines and
// waits only inside the calling goroutine.
package retry
