package gateway

import (
	"context"
	"testing"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

func TestSmoke(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.createOrder = func(ctx context.Context, r *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
		return &orderv1.Order{Id: "ord-1", Status: orderv1.Order_STATUS_CONFIRMED, PaymentMethod: r.PaymentMethod}, nil
	}
	r := h.do("POST", "/api/orders", aliceToken, `{"lines":[{"sku":"keyboard-001","quantity":2}],"paymentMethod":"pm_card_ok"}`, "Idempotency-Key: k1")
	t.Logf("%d %v %s", r.status, r.header, r.body)
	r = h.do("GET", "/api/orders/x", "", "")
	t.Logf("%d %v %s", r.status, r.header, r.body)
	r = h.do("GET", "/health", "", "")
	t.Logf("%d %v %s", r.status, r.header, r.body)
	t.Log(h.logs.String())
}
