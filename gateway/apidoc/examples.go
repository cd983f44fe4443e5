package apidoc

import "github.com/getkin/kin-openapi/openapi3"

// Example values shared by the examples below, as a dev run answers them.
var (
	exPrice = map[string]any{"amountMinor": "4999", "currency": "USD"}
	exTime  = "2026-12-01T09:30:00Z"
	exItem  = map[string]any{"sku": "keyboard-001", "name": "Mechanical Keyboard", "unitPrice": exPrice,
		"available": "41", "reserved": "0", "sold": "9", "updateTime": exTime, "etag": "Xq3v0p8lJ1cWm2Rk"}
	exOrder = map[string]any{"id": "ord-6f1c2a9e", "customer": "alice", "status": "CONFIRMED",
		"lines":         []any{map[string]any{"sku": "keyboard-001", "quantity": 1, "unitPrice": exPrice}},
		"total":         exPrice,
		"paymentMethod": "pm_card_ok", "paymentId": "pay-0b7d41c3", "reservationId": "res-9a4e22f0",
		"failureReason": "", "createTime": exTime, "updateTime": exTime, "etag": "b7TnQe2ZsY0aK9fD"}
	exReservation = map[string]any{"id": "res-9a4e22f0", "orderId": "manual-1", "state": "ACTIVE",
		"lines":      []any{map[string]any{"sku": "mouse-001", "quantity": 1, "unitPrice": map[string]any{"amountMinor": "2499", "currency": "USD"}}},
		"createTime": exTime, "updateTime": exTime, "expireTime": "2026-12-01T09:35:00Z"}
	exPayment = map[string]any{"id": "pay-0b7d41c3", "orderId": "manual-1", "status": "CAPTURED",
		"amount": map[string]any{"amountMinor": "2499", "currency": "USD"}, "paymentMethod": "pm_card_ok",
		"failureReason": "", "createTime": exTime, "updateTime": exTime, "etag": "Lm4cR8wPz1Hq6uVa"}
)

// with returns m with the members of more set on a copy.
func with(m map[string]any, more map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// responseExamples are the success answer of each operation, keyed by
// operation id: one example per operation, so a reader and a generated
// client's docs see a real answer.
var responseExamples = map[string]any{
	"listItems":          map[string]any{"items": []any{exItem}, "nextPageToken": ""},
	"createItem":         map[string]any{"sku": "pad-001", "name": "Desk Pad", "unitPrice": map[string]any{"amountMinor": "1500", "currency": "USD"}, "available": "10", "reserved": "0", "sold": "0", "updateTime": exTime, "etag": "T0yq5HcN2bWe8GsJ"},
	"getItem":            exItem,
	"updateItem":         with(exItem, map[string]any{"available": "25"}),
	"listOrders":         map[string]any{"orders": []any{exOrder}, "nextPageToken": ""},
	"createOrder":        exOrder,
	"getOrder":           exOrder,
	"cancelOrder":        with(exOrder, map[string]any{"status": "CANCELLED"}),
	"listPayments":       map[string]any{"payments": []any{exPayment}, "nextPageToken": ""},
	"createPayment":      exPayment,
	"getPayment":         exPayment,
	"refundPayment":      with(exPayment, map[string]any{"status": "REFUNDED"}),
	"reserveStock":       exReservation,
	"getReservation":     exReservation,
	"commitReservation":  with(exReservation, map[string]any{"state": "COMMITTED"}),
	"releaseReservation": with(exReservation, map[string]any{"state": "RELEASED"}),
}

// requestExamples are the bodies of the operations that take more than {}.
var requestExamples = map[string]any{
	"createItem":    map[string]any{"sku": "pad-001", "name": "Desk Pad", "unitPrice": map[string]any{"amountMinor": "1500", "currency": "USD"}, "available": "10"},
	"updateItem":    map[string]any{"available": "25"},
	"createOrder":   map[string]any{"lines": []any{map[string]any{"sku": "keyboard-001", "quantity": 1}}, "paymentMethod": "pm_card_ok"},
	"createPayment": map[string]any{"orderId": "manual-1", "amount": map[string]any{"amountMinor": "2499", "currency": "USD"}, "paymentMethod": "pm_card_ok"},
	"reserveStock":  map[string]any{"orderId": "manual-1", "lines": []any{map[string]any{"sku": "mouse-001", "quantity": 1}}},
}

// examples sets each operation's examples: its success answer's and, where
// it has one, its request body's. Validate checks them against the schemas.
func examples(doc *openapi3.T) {
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for code, r := range op.Responses.Map() {
				if code[0] != '2' || r.Value == nil {
					continue
				}
				if mt := r.Value.Content.Get("application/json"); mt != nil && code != "202" { // 202: see accepted
					mt.Example = responseExamples[op.OperationID]
				}
			}
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil {
				if ex, ok := requestExamples[op.OperationID]; ok {
					mt.Example = ex
				} else if _, shop := responseExamples[op.OperationID]; shop {
					mt.Example = map[string]any{} // a service loaded at run time gets none
				}
			}
		}
	}
}
