// Package payment is the PaymentService (portico.payment.v1): it charges and
// refunds orders with deterministic test payment methods and never talks to
// a card network.
//
//	method                      result
//	pm_card_ok                  CAPTURED
//	pm_card_declined            DECLINED, failure_reason CARD_DECLINED
//	pm_card_insufficient_funds  DECLINED, failure_reason INSUFFICIENT_FUNDS
//
// A decline is a result, not an error: CreatePayment returns the DECLINED
// payment, and the order may be charged again under a new idempotency key.
//
// # Idempotency
//
// CreatePayment requires the gRPC metadata "idempotency-key" (1-255
// printable ASCII characters; INVALID_ARGUMENT, IDEMPOTENCY_KEY_MISSING
// otherwise). The key, a SHA-256 of the deterministically marshalled request
// and the payment id are stored in the same transaction as the payment, so:
//
//   - the same key with the same request returns the first result (same id,
//     same status as now stored) with the response header
//     x-portico-replayed: true (callmeta.ReplayedKey);
//   - the same key with another request is FAILED_PRECONDITION,
//     IDEMPOTENCY_KEY_REUSED;
//   - concurrent calls with one key create exactly one payment: the key's
//     unique constraint decides the winner and the losers read it back.
//
// Keys are global to the service, not scoped per caller: the order service
// is the only client and derives its keys from its own order ids.
//
// # Orders
//
// An order has at most one CAPTURED payment, enforced by a partial unique
// index. A new payment (new key) for an order that has one is
// FAILED_PRECONDITION, ORDER_ALREADY_PAID, whatever its method; nothing is
// stored, so the same key may succeed after a refund. Refunding is
// CAPTURED -> REFUNDED, a no-op on REFUNDED, and PAYMENT_NOT_CAPTURED on a
// DECLINED payment.
//
// # Roles
//
// The caller's role (callmeta.RoleKey, set by the server chain's identity
// step from the verified assertion; callmeta.RoleIn for a call without one)
// decides what it may do. A payment names no customer, so no payment is a
// customer's own: a customer sees its payment on its order.
//
//	method                        roles
//	CreatePayment, RefundPayment  service (the order saga), admin
//	GetPayment, ListPayments      service, admin, reader
//
// Any other role is PERMISSION_DENIED: ADMIN_REQUIRED for a charge or
// refund, PERMISSION_DENIED for a read. An order whose id starts with
// callmeta.OrderIDPrefix ("ord-") is the order service's: its saga alone
// charges and refunds it, so an admin's CreatePayment or RefundPayment for
// it is PERMISSION_DENIED, naming the order. An admin refunds such an order
// by cancelling it (OrderService.CancelOrder), which refunds the payment
// and marks the order CANCELLED; an order never stays CONFIRMED with its
// money returned, and nobody captures money behind a FAILED order. Other
// order ids are an admin's manual payments.
//
// # Errors
//
// Malformed requests are INVALID_ARGUMENT with a google.rpc.BadRequest naming
// every bad field, and nothing is written. An amount is 1 to MaxAmountMinor
// (1e15 minor units, 10 trillion in major units of a two-decimal currency);
// payment ids and order ids are 1-64 characters of [A-Za-z0-9_-] (rules in
// payment.proto), checked before any lookup, so a NOT_FOUND echoes at most 64
// safe characters. Other failures carry a google.rpc.ErrorInfo with domain
// Domain and the name of a portico.type.v1.Reason, sent with the gRPC code
// the enum gives it. ListPayments is paged, oldest first, and
// bounded by bytes (package pagebudget).
//
// Service is safe for concurrent use; the SQLite store serializes writers
// (BEGIN IMMEDIATE). The PostgreSQL store (OpenPostgres, chosen by a
// postgres:// Config.DB) is shared by any number of replicas: an advisory
// lock per idempotency key and the one-capture index keep the guarantees
// (see PostgresStore).
package payment
