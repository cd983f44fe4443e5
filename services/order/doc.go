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
//
// Each error carries ErrorInfo metadata orderId (and sku, requested,
// available, or declineReason), and GetOrder shows the FAILED order.
//
// Unreachable inventory on ReserveStock is answered at once: UNAVAILABLE
// INVENTORY_UNAVAILABLE with RetryInfo 1s, and the PENDING order and its
// idempotency record are deleted in one transaction, so no order is
// reported as created and a retry with the same key starts afresh. A
// reservation that may have landed anyway is released by its TTL.
//
// An unknown outcome (a timeout, INTERNAL, a payment UNAVAILABLE: the call
// may have taken effect) is never reported as a failure. The step is retried
// with the same keys while the budget lasts (WithAttempts, WithBackoff); if
// it stays unknown the order is answered PENDING and the reconciler finishes
// it.
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
// action is logged with the order id. Across processes, status changes are
// compare-and-set on PENDING, so two runs never overwrite each other.
//
// # Other RPCs
//
// GetOrder and ListOrders show customers only their own orders (another
// customer's is ORDER_NOT_FOUND, as if it did not exist); admin and reader
// roles see all. ListOrders is newest first; page_size 0 means 20 and above
// 100 means 100. CancelOrder (the customer or an admin) refunds a CONFIRMED
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
