package apidoc

import "strings"

// Tag is one REST resource of the document: the operations whose path
// starts with Prefix carry its Name. The document's tags are these, not
// the gRPC services that implement them, so a generated client groups
// its calls the way a REST caller sees the API.
type Tag struct {
	Name, Prefix, Description string
}

// Tags are the document's resources, in the order the document lists them.
var Tags = []Tag{
	{"Orders", "/api/orders", "Place, read and cancel orders. A customer sees only their own orders; admin and reader see every customer's. Creating one reserves the stock, charges the payment method and commits the reservation, or fails without holding anything."},
	{"Inventory", "/api/inventory", "The catalogue and its stock. Anyone with a token may read it; only admin may add or change items."},
	{"Reservations", "/api/reservations", "Stock held for an order (admin): reserve, then either commit (reserved stock becomes sold) or release (it becomes available again). The order service does this itself for every order."},
	{"Payments", "/api/payments", "Charges and refunds (admin). Payment methods are test methods: pm_card_ok captures, pm_card_declined and pm_card_insufficient_funds decline."},
}

// tagOf is the name of the Tag whose Prefix path starts with.
func tagOf(path string) string {
	for _, t := range Tags {
		if path == t.Prefix || strings.HasPrefix(path, t.Prefix+"/") || strings.HasPrefix(path, t.Prefix+":") {
			return t.Name
		}
	}
	return ""
}

// restDescriptions replace, for the RPCs whose proto comment speaks in gRPC
// terms (status names, ErrorInfo, proto field names), the comment with what
// a REST client sees: HTTP statuses, problem codes and JSON names.
var restDescriptions = map[string]string{
	"/portico.order.v1.OrderService/WatchOrder":         "Streams one of the caller's orders: its current state first, then each change, until it is CONFIRMED, FAILED or CANCELLED, when the stream ends cleanly. Another customer's order is 404 ORDER_NOT_FOUND, as for reading it. Send Accept: text/event-stream for Server-Sent Events (an EventSource works), or application/x-ndjson (the default). Streams are bounded (streams in the gateway's configuration): a caller may keep only so many open (429 TOO_MANY_STREAMS), and the gateway ends a stream that lasts too long, idles or outlives a shutdown with the terminal problem STREAM_RECONNECT: open it again.",
	"/portico.order.v1.OrderService/ExportOrders":       "Exports the caller's orders (every customer's for admin and reader), newest first, as NDJSON (format=NDJSON, the default) or CSV (format=CSV), written as it is read: the export's size never has to fit in the gateway's or the service's memory.",
	"/portico.inventory.v1.InventoryService/CreateItem": "Adds an item to the catalogue (admin). A SKU that is taken is 409 ITEM_ALREADY_EXISTS.",
	"/portico.inventory.v1.InventoryService/UpdateItem": "Sets an item's name, price or available stock (admin).",
	"/portico.order.v1.OrderService/CreateOrder": "Places an order. The request must carry an Idempotency-Key header (1-255 printable ASCII characters), scoped to the caller: the same key with the same body answers the same order, with the header \"Idempotent-Replayed: true\", and reserves or charges nothing more; the same key with another body is 422 IDEMPOTENCY_KEY_REUSED.\n\n" +
		"A definite business failure ends the order FAILED (GET shows it, with its failureReason) and answers the failure: 409 INSUFFICIENT_STOCK, 404 ITEM_NOT_FOUND or 422 PAYMENT_DECLINED. When the inventory cannot be reached the answer is 503 INVENTORY_UNAVAILABLE at once and nothing is created or charged. An unknown outcome (a timeout) answers the order PENDING; the gateway finishes or compensates it in the background.",
	"/portico.payment.v1.PaymentService/CreatePayment":          "Charges an order (admin). The request must carry an Idempotency-Key header (1-255 printable ASCII characters): the same key with the same body answers the first result; the same key with another body is 422 IDEMPOTENCY_KEY_REUSED. A declined payment is a result, not an error: it is answered with status DECLINED.",
	"/portico.payment.v1.PaymentService/RefundPayment":          "Refunds a captured payment in full (admin). Refunding a refunded payment answers it unchanged; refunding one that was never captured is 409 PAYMENT_NOT_CAPTURED.",
	"/portico.inventory.v1.InventoryService/ReserveStock":       "Moves stock from available to reserved for every line, or for none (admin). It is keyed by orderId: the same orderId again answers the same reservation and reserves nothing more. A reservation not committed within its time to live is released by itself.",
	"/portico.inventory.v1.InventoryService/CommitReservation":  "Turns reserved stock into sold stock (admin). Committing a committed reservation answers it unchanged; committing a released one is 409 RESERVATION_RELEASED.",
	"/portico.inventory.v1.InventoryService/ReleaseReservation": "Returns reserved stock to available (admin). Releasing a released reservation answers it unchanged; releasing a committed one is 409 RESERVATION_COMMITTED.",
}
