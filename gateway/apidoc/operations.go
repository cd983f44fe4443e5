package apidoc

import "net/http"

// Operation is what the edge answers for one RPC beyond forwarding it.
type Operation struct {
	// Summary is the operation's summary as a REST client reads it ("Get
	// an order"), not the RPC's comment, which names the RPC.
	Summary string
	// Created: the edge answers 201 with a Location header instead of 200.
	Created bool
	// IdempotencyKey: the edge requires Idempotency-Key and may answer
	// Idempotent-Replayed: true.
	IdempotencyKey bool
	// RespondAsync: the edge honours Prefer: respond-async and may answer
	// 202 Accepted with Location and Preference-Applied.
	RespondAsync bool
	// Errors are the statuses the RPC's own reasons can cause, beyond
	// Common: 404 (a *_NOT_FOUND reason), 409 (ALREADY_EXISTS or
	// FAILED_PRECONDITION) and 422 (a reason with http_status 422).
	Errors []int
}

// Common are the statuses every /api operation can answer: 400 (a field
// rule, malformed JSON, a bad Grpc-Timeout), 401 and 403 (the edge's bearer
// policy), 429 (an upstream sheds load with RESOURCE_EXHAUSTED and a retry
// hint), 502, 503 and 504 (the resilience chain: unreachable, circuit open
// or overloaded, deadline).
var Common = []int{
	http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests,
	http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout,
}

// Operations is the table, keyed by full RPC name. Each row is read from
// the reasons the RPC's service sends (portico.type.v1.Reason) and the
// edge's behaviours (gateway/routes.go, which a gateway test checks
// against Created, IdempotencyKey and RespondAsync). An RPC missing here is an error in
// Build, so a new route cannot be published without its row.
var Operations = map[string]Operation{
	// inventory
	"/portico.inventory.v1.InventoryService/GetItem":            {Summary: "Get a catalogue item", Errors: []int{404}},
	"/portico.inventory.v1.InventoryService/ListItems":          {Summary: "List the catalogue"},
	"/portico.inventory.v1.InventoryService/CreateItem":         {Summary: "Add a catalogue item", Created: true, Errors: []int{409}},                 // ITEM_ALREADY_EXISTS
	"/portico.inventory.v1.InventoryService/UpdateItem":         {Summary: "Update a catalogue item", Errors: []int{404}},                             // ITEM_NOT_FOUND
	"/portico.inventory.v1.InventoryService/ReserveStock":       {Summary: "Reserve stock for an order", Created: true, Errors: []int{404, 409, 422}}, // ITEM_NOT_FOUND, INSUFFICIENT_STOCK, IDEMPOTENCY_KEY_REUSED
	"/portico.inventory.v1.InventoryService/GetReservation":     {Summary: "Get a reservation", Errors: []int{404}},                                   // RESERVATION_NOT_FOUND
	"/portico.inventory.v1.InventoryService/CommitReservation":  {Summary: "Commit a reservation", Errors: []int{404, 409}},                           // RESERVATION_RELEASED
	"/portico.inventory.v1.InventoryService/ReleaseReservation": {Summary: "Release a reservation", Errors: []int{404, 409}},                          // RESERVATION_COMMITTED
	// payment
	"/portico.payment.v1.PaymentService/CreatePayment": {Summary: "Charge an order", Created: true, IdempotencyKey: true, Errors: []int{409, 422}}, // ORDER_ALREADY_PAID, IDEMPOTENCY_KEY_REUSED
	"/portico.payment.v1.PaymentService/GetPayment":    {Summary: "Get a payment", Errors: []int{404}},                                             // PAYMENT_NOT_FOUND
	"/portico.payment.v1.PaymentService/ListPayments":  {Summary: "List an order's payments"},
	"/portico.payment.v1.PaymentService/RefundPayment": {Summary: "Refund a payment", Errors: []int{404, 409}}, // PAYMENT_NOT_FOUND, PAYMENT_NOT_CAPTURED
	// order
	"/portico.order.v1.OrderService/CreateOrder": {Summary: "Place an order", Created: true, IdempotencyKey: true, RespondAsync: true, Errors: []int{404, 409, 422}}, // ITEM_NOT_FOUND, INSUFFICIENT_STOCK, PAYMENT_DECLINED / IDEMPOTENCY_KEY_REUSED
	"/portico.order.v1.OrderService/GetOrder":    {Summary: "Get an order", Errors: []int{404}},                                                                      // ORDER_NOT_FOUND
	"/portico.order.v1.OrderService/ListOrders":  {Summary: "List orders"},
	"/portico.order.v1.OrderService/CancelOrder": {Summary: "Cancel an order", Errors: []int{404, 409}}, // ORDER_NOT_FOUND, ORDER_NOT_CANCELLABLE
}
