// Package order is the order service: it takes orders and runs the order
// saga across the inventory and payment services, so no client ever has to
// decide who refunds or releases what (seed 000).
//
// # States
//
//	PENDING ──► CONFIRMED ──► CANCELLED   (CancelOrder: refund)
//	   │
//	   └──────► FAILED                    (definite failure, after compensation)
//
// A PENDING order is one whose saga has not finished: either a run is still
// going or an outcome was unknown and the reconciler will finish it. Only a
// PENDING order is ever withdrawn (deleted), and only by the CreateOrder call
// that stored it, when inventory was unreachable. CONFIRMED, FAILED and
// CANCELLED orders change only as drawn; every change stores update_time.
//
// # The saga
//
// CreateOrder authenticates the caller (callmeta principal; the customer is
// always the caller), validates the whole request (every bad field is
// reported in one google.rpc.BadRequest, and nothing is written), stores the
// order PENDING together with its idempotency record, then runs:
//
//	ReserveStock(order_id)            keyed by the order id: a repeat returns the same reservation
//	CreatePayment(total)              metadata idempotency-key "payment:{order_id}": never a second charge
//	CommitReservation                 stock becomes sold
//	-> CONFIRMED (reservation_id, payment_id)
//
// Definite failures settle the order FAILED, compensating first:
//
//	INSUFFICIENT_STOCK / ITEM_NOT_FOUND  nothing held        FAILED; FAILED_PRECONDITION INSUFFICIENT_STOCK
//	                                                          or NOT_FOUND ITEM_NOT_FOUND
//	payment DECLINED                      release stock       FAILED PAYMENT_DECLINED or INSUFFICIENT_FUNDS;
//	                                                          FAILED_PRECONDITION PAYMENT_DECLINED
//	commit says RESERVATION_RELEASED      refund the payment  FAILED RESERVATION_EXPIRED;
//	(the TTL ran out)                                         FAILED_PRECONDITION RESERVATION_EXPIRED
//	the reservation gives no valid total  refund captures,    FAILED INVALID_TOTAL (metadata cause:
//	(mixed currencies, an unpriced line,  release stock       MIXED_CURRENCIES, UNPRICED_LINE, BAD_LINE,
//	overflow, zero, or above 1e15)                            OVERFLOW, ZERO_TOTAL, ABOVE_PAYMENT_LIMIT)
//	CreatePayment INVALID_ARGUMENT        refund captures,    FAILED INVALID_PAYMENT_REQUEST
//	(e.g. an unknown payment method)      release stock
//	any other definite error of a step,   refund captures,    FAILED UPSTREAM_REJECTED (metadata step,
//	or a payment neither captured nor     release stock       upstreamCode, upstreamReason; or step,
//	declined                                                  paymentStatus)
//
// The last three answer FAILED_PRECONDITION with the failure_reason as
// ErrorInfo reason. Each error carries ErrorInfo metadata orderId (and sku,
// requested, available, declineReason, cause, step, upstreamCode,
// upstreamReason or paymentStatus), and GetOrder shows the FAILED order.
//
// The total is the sum of quantity × unit price over the reservation's
// lines, computed with checked int64 arithmetic, in one currency, and must
// be 1 to 1e15 minor units, the payment service's MaxAmountMinor (inventory
// caps a unit price at 1e12, so one full line of 1000 units fits but fifty
// may not). An invalid total is never sent to the payment service.
//
// Compensating lists the order's payments and refunds every capture (one an
// earlier run, or an earlier version, made is found too), then releases the
// reservation. A release that does not go through is left to the
// reservation's TTL. A capture is never hidden behind FAILED: if the
// payments cannot be listed or a refund does not go through, the order
// stays PENDING for the reconciler; a definite refusal there is logged at
// ERROR, since it needs a person.
//
// Unreachable inventory on ReserveStock is answered at once: UNAVAILABLE
// INVENTORY_UNAVAILABLE with RetryInfo 1s, and the PENDING order and its
// idempotency record are deleted in one transaction, so no order is
// reported as created and a retry with the same key starts afresh. A
// reservation that may have landed anyway is released by its TTL.
//
// An unknown outcome is an error that leaves open whether the call took
// effect: UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, UNKNOWN (and any error
// that is not a gRPC status), INTERNAL, ABORTED, RESOURCE_EXHAUSTED and
// DATA_LOSS. It is never reported as a failure. The step is retried with the
// same keys while the budget lasts (WithAttempts, WithBackoff); if it stays
// unknown the order is answered PENDING and the reconciler finishes it.
// Every other code is definite: the call did not take effect.
//
// # Budget
//
// A saga run ends min(50ms, 10% of the remaining time) before the incoming
// deadline, keeping that slice for storing the result and answering; with no
// incoming deadline it gets WithBudget (default 10s). Store writes are
// detached from the caller's cancellation (5s each), so a caller hanging up
// cannot leave a charge unrecorded.
//
// # Idempotency
//
// Keys (gRPC metadata "idempotency-key", 1-255 printable ASCII) are scoped
// per customer: alice and bob may use the same key. The request hash is the
// SHA-256 of the deterministic proto encoding of the request with
// output-only fields cleared. The same key with the same hash replays the
// stored order (a FAILED one replays its error) and sets the response header
// "x-portico-replayed: true"; a different hash is FAILED_PRECONDITION
// IDEMPOTENCY_KEY_REUSED. A replay that finds the order PENDING while this
// process is still running its saga waits for it (an in-process
// notification, no polling) until the same answer slice before its deadline,
// then answers whatever is stored. Concurrent calls with one key therefore
// make one order, one reservation and one charge.
//
// # Reconciler
//
// Run calls Reconcile every ReconcileInterval; tests call it directly with
// an injected clock. Reconcile takes each PENDING order older than
// ReconcileAfter (by create time), including orders left by a crash, that no
// saga run in this process holds, and drives the same saga: every step is
// idempotent, so it continues where the last run stopped, or compensates and
// fails the order. A reservation already released before the charge is
// settled by listing the order's payments: captures are refunded. While a
// dependency is unreachable the order stays PENDING for the next round. Every
// action is logged with the order id, and statuses are logged by their API
// names (CONFIRMED, not STATUS_CONFIRMED). Across processes, status changes
// are compare-and-set on PENDING, so two runs never overwrite each other.
//
// An order still PENDING after WithReconcileRounds rounds (default 20, about
// 40s at the default 2s interval) is logged at ERROR and from then on driven
// only after a wait, by the injected clock, starting at WithReconcileBackoff
// (default 1m) and doubling per round up to an hour; it is still driven, so
// it settles once its dependency answers. Orders backing off never crowd
// others out of a round's batch. The counts live in memory: a restart starts
// them afresh.
//
// # Other RPCs
//
// GetOrder and ListOrders show customers only their own orders (another
// customer's is ORDER_NOT_FOUND, as if it did not exist); admin and reader
// roles see all. GetOrder and CancelOrder take an id of 1-64 characters of
// [A-Za-z0-9_-] (INVALID_ARGUMENT naming id otherwise, without echoing it),
// so a NOT_FOUND echoes at most 64 safe characters; ListOrders page tokens
// are checked the same way. ListOrders is newest first; page_size 0 means 20
// and above 100 means 100, and a page ends early rather than pass
// pagebudget.MaxBytes. CancelOrder (the customer or an admin) refunds a CONFIRMED
// order and marks it CANCELLED; its committed stock counts as sold (restock
// is an admin action). FAILED and PENDING orders are ORDER_NOT_CANCELLABLE
// (PENDING with RetryInfo); CANCELLED ones come back unchanged. When a
// dependency is unreachable the cancel is UNAVAILABLE and the order is left
// as it was.
//
// # Storage
//
// Store is the service's own interface; SQLiteStore implements it on an
// embedded database (migrations under migrations/). Service is safe for
// concurrent use.
package order
