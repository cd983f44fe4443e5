// Package order is the order service: it takes orders and runs the order
// saga across the inventory and payment services (reserve stock, charge,
// commit the reservation), compensating on a definite failure, so no client
// ever has to decide who refunds or releases what.
//
// # Use
//
// Run serves the service from a Config (the portico order subcommand). In
// process, New builds a Service on a Store (OpenSQLite; OpenPostgres, shared
// by several order replicas, whose reconcilers then take turns through a
// lease per PENDING order; or any other implementation) and clients of the inventory and payment services, with
// Options for the logger, saga budget and reconciler; register it on
// a grpc.Server. Reconcile runs one reconciler round (Run calls it every
// ReconcileInterval). A Service is safe for concurrent use.
//
// # States
//
//	ACCEPTED ──► PENDING ──► CONFIRMED ──► CANCELLED   (CancelOrder: refund)
//	   │            │
//	   │            └──────► FAILED                    (definite failure, after compensation)
//	   └──► CANCELLED, or settled by one run
//
// A PENDING order's saga has not finished: a run is still going, or an
// outcome was unknown and the reconciler will finish it. Only the
// CreateOrder call that stored a PENDING order ever withdraws it (deleted,
// when inventory was unreachable). Status changes are compare-and-set on
// PENDING, so two runs, in one process or two, never overwrite each other.
//
// ACCEPTED is an order received while inventory refused ReserveStock
// UNAVAILABLE (unreachable, breaker open: before any reservation could
// exist) from a caller whose metadata "prefer" (RFC 7240, package prefer)
// holds respond-async: instead of being withdrawn it is stored ACCEPTED,
// nothing reserved or charged, and CreateOrder answers it with the header
// "preference-applied: respond-async", while fewer than WithMaxAccepted
// (default 1000) wait, and fewer than WithMaxAcceptedPerCustomer (default
// 20) of the same customer's, so one customer cannot fill the first bound
// (Store.Accept checks both in the transaction of its write; past the
// second the UNAVAILABLE carries ErrorInfo metadata limit=customer).
// Reconcile runs the saga for ACCEPTED orders in
// arrival order, stopping at the first inventory still refuses; a run that
// learns anything stores the order PENDING, and from there it is an
// ordinary PENDING order. Status writes are compare-and-set on ACCEPTED
// too. CancelOrder cancels an ACCEPTED order that no run holds.
//
// # Outcomes
//
// An unknown outcome is an error that leaves open whether a call took
// effect: UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, UNKNOWN (and any error
// that is not a gRPC status), INTERNAL, ABORTED, RESOURCE_EXHAUSTED and
// DATA_LOSS. It is never reported as a failure: the order stays PENDING for
// the reconciler. Each step calls its dependency once: retries belong to one
// layer, the client chain the dependencies were dialled with, and the saga
// does not repeat them. Every other code is definite: the call did not take
// effect, and the order is compensated and FAILED (the table of failures and
// their answers is in the README, "What happens to an order"). A capture is
// never hidden behind FAILED: when refunding is not certain the order stays
// PENDING.
//
// Every step is idempotent (the reservation is keyed by the order id, the
// charge by PaymentKey), so the reconciler resumes any PENDING order where
// its last run stopped, also after a crash.
//
// # Budget and defaults
//
// A saga run ends min(50ms, 10% of the remaining time) before the incoming
// deadline, keeping that slice for storing the result and answering; with no
// incoming deadline it gets WithBudget (default 10s). Store writes are
// detached from the caller's cancellation (5s each), so a caller hanging up
// cannot leave a charge unrecorded. The total is computed with checked int64
// arithmetic, in one currency, and must be 1 to 1e15 minor units (the
// payment service's MaxAmountMinor). An order still PENDING after
// WithReconcileRounds rounds (default 20) is logged at ERROR and then driven
// only after a backoff from WithReconcileBackoff (default 1m) doubling to an
// hour; the counts live in memory.
//
// # Idempotency
//
// Keys (gRPC metadata "idempotency-key", 1-255 printable ASCII) are scoped
// per customer. The request hash is the SHA-256 of the deterministic proto
// encoding of the request with output-only fields cleared. The same key and
// hash replays the stored order (a FAILED one replays its error) with the
// response header "x-portico-replayed: true"; another hash is
// FAILED_PRECONDITION IDEMPOTENCY_KEY_REUSED. A replay that finds the order
// PENDING while this process runs its saga waits for it (an in-process
// notification) until its own answer slice, then answers what is stored.
package order
