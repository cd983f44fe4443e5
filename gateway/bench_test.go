package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// BenchmarkCreateOrder is one POST /api/orders through the whole edge to a
// stub on loopback TCP: auth, checks, JSON, gRPC, 201.
func BenchmarkCreateOrder(b *testing.B) {
	h := newHarness(b, setup{})
	h.order.createOrder = func(context.Context, *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
		return &orderv1.Order{Id: "ord-1", Status: orderv1.Order_STATUS_CONFIRMED}, nil
	}
	handler := h.srv.Handler()
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/api/orders", strings.NewReader(orderBody))
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "k")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkRejectUnauthenticated is the cheapest rejection.
func BenchmarkRejectUnauthenticated(b *testing.B) {
	h := newHarness(b, setup{})
	handler := h.srv.Handler()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/orders", nil))
	}
}
