package gateway

import (
	"context"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// TestCreateOrderContract is the orders contract outside tests rely on:
// 201, Location, the order with short enum names and zero values, and the
// same answer plus Idempotent-Replayed on a replay.
func TestCreateOrderContract(t *testing.T) {
	h := newHarness(t, setup{})
	var mu sync.Mutex
	byKey := map[string]*orderv1.Order{}
	h.order.createOrder = func(ctx context.Context, r *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
		mu.Lock()
		defer mu.Unlock()
		key := callmeta.IdempotencyKeyFromIncoming(ctx)
		if o, ok := byKey[key]; ok {
			_ = grpc.SetHeader(ctx, metadata.Pairs("x-portico-replayed", "true"))
			return o, nil
		}
		o := &orderv1.Order{
			Id: "ord-0001", Customer: "alice", Status: orderv1.Order_STATUS_CONFIRMED, PaymentMethod: r.PaymentMethod,
			Lines: []*orderv1.OrderLine{{Sku: r.Lines[0].Sku, Quantity: r.Lines[0].Quantity, UnitPrice: &typev1.Money{AmountMinor: 4999, Currency: "USD"}}},
			Total: &typev1.Money{AmountMinor: 9998, Currency: "USD"},
		}
		byKey[key] = proto.Clone(o).(*orderv1.Order)
		return o, nil
	}
	for i, wantReplay := range []string{"", "true"} {
		r := h.do("POST", "/api/orders", aliceToken, orderBody, "Idempotency-Key: order-key-1")
		if r.status != 201 {
			t.Fatalf("attempt %d: status = %d %s, want 201", i, r.status, r.body)
		}
		if got := r.header.Get("Location"); got != "/api/orders/ord-0001" {
			t.Errorf("attempt %d: Location = %q", i, got)
		}
		if got := r.header.Get("Idempotent-Replayed"); got != wantReplay {
			t.Errorf("attempt %d: Idempotent-Replayed = %q, want %q", i, got, wantReplay)
		}
		o := r.json(t)
		if o["id"] != "ord-0001" || o["status"] != "CONFIRMED" || o["failureReason"] != "" || o["reservationId"] != "" {
			t.Errorf("attempt %d: order = %s", i, r.body)
		}
		line := o["lines"].([]any)[0].(map[string]any)
		if line["quantity"] != float64(2) || line["unitPrice"].(map[string]any)["amountMinor"] != "4999" {
			t.Errorf("attempt %d: line = %v", i, line)
		}
	}
}

func TestCreatedLocations(t *testing.T) {
	h := newHarness(t, setup{})
	h.inv.createItem = func(_ context.Context, r *inventoryv1.CreateItemRequest) (*inventoryv1.Item, error) {
		return r.Item, nil
	}
	h.inv.reserveStock = func(context.Context, *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
		return &inventoryv1.Reservation{Id: "res-1", State: inventoryv1.Reservation_STATE_ACTIVE}, nil
	}
	h.pay.createPayment = func(context.Context, *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
		return &paymentv1.Payment{Id: "pay 1/x", Status: paymentv1.Payment_STATUS_CAPTURED}, nil
	}
	h.inv.updateItem = func(_ context.Context, r *inventoryv1.UpdateItemRequest) (*inventoryv1.Item, error) {
		return r.Item, nil
	}
	tests := []struct {
		name, method, path, body string
		header                   []string
		wantStatus               int
		wantLocation             string
		wantEnum                 [2]string
	}{
		{"create item", "POST", "/api/inventory", `{"sku":"mouse-002","name":"Mouse"}`, nil, 201, "/api/inventory/mouse-002", [2]string{}},
		{"reserve stock", "POST", "/api/reservations", `{"orderId":"ord-1"}`, nil, 201, "/api/reservations/res-1", [2]string{"state", "ACTIVE"}},
		{"create payment escapes", "POST", "/api/payments", `{"orderId":"ord-1"}`, []string{"Idempotency-Key: p"}, 201, "/api/payments/pay%201%2Fx", [2]string{"status", "CAPTURED"}},
		{"update is not a create", "PATCH", "/api/inventory/mouse-002", `{"name":"M"}`, nil, 200, "", [2]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(tt.method, tt.path, adminToken, tt.body, tt.header...)
			if r.status != tt.wantStatus || r.header.Get("Location") != tt.wantLocation {
				t.Errorf("%s %s = %d, Location %q; want %d, %q", tt.method, tt.path, r.status, r.header.Get("Location"), tt.wantStatus, tt.wantLocation)
			}
			if tt.wantEnum[0] != "" && r.json(t)[tt.wantEnum[0]] != tt.wantEnum[1] {
				t.Errorf("%s = %v, want %s", tt.wantEnum[0], r.json(t)[tt.wantEnum[0]], tt.wantEnum[1])
			}
		})
	}
}

func TestPatchBindsPathAndBody(t *testing.T) {
	h := newHarness(t, setup{})
	got := make(chan *inventoryv1.UpdateItemRequest, 1)
	h.inv.updateItem = func(_ context.Context, r *inventoryv1.UpdateItemRequest) (*inventoryv1.Item, error) {
		got <- r
		return r.Item, nil
	}
	r := h.do("PATCH", "/api/inventory/mouse-002?updateMask=name,unitPrice,available", adminToken, `{"name":"Mouse","available":"7"}`)
	if r.status != 200 {
		t.Fatalf("status = %d %s", r.status, r.body)
	}
	req := <-got
	// The mask's JSON form (lowerCamel) reaches the service in proto names,
	// as protojson reads a FieldMask.
	if req.GetItem().GetSku() != "mouse-002" || req.GetItem().GetName() != "Mouse" || req.GetItem().GetAvailable() != 7 ||
		!slices.Equal(req.GetUpdateMask().GetPaths(), []string{"name", "unit_price", "available"}) {
		t.Errorf("UpdateItem got %v, want mask paths name, unit_price, available", req)
	}
}

// TestBodyFieldRoutes: the body: "item" routes decode the body into the
// request's item, and PATCH without updateMask derives the mask from the
// fields the body sets (the README's examples).
func TestBodyFieldRoutes(t *testing.T) {
	h := newHarness(t, setup{})
	created := make(chan *inventoryv1.CreateItemRequest, 1)
	h.inv.createItem = func(_ context.Context, r *inventoryv1.CreateItemRequest) (*inventoryv1.Item, error) {
		created <- r
		return r.Item, nil
	}
	updated := make(chan *inventoryv1.UpdateItemRequest, 1)
	h.inv.updateItem = func(_ context.Context, r *inventoryv1.UpdateItemRequest) (*inventoryv1.Item, error) {
		updated <- r
		return r.Item, nil
	}

	r := h.do("POST", "/api/inventory", adminToken,
		`{"sku":"pad-001","name":"Desk Pad","unitPrice":{"amountMinor":"1500","currency":"USD"},"available":"10"}`)
	if r.status != 201 {
		t.Fatalf("POST status = %d %s", r.status, r.body)
	}
	c := <-created
	if it := c.GetItem(); it.GetSku() != "pad-001" || it.GetName() != "Desk Pad" || it.GetAvailable() != 10 ||
		it.GetUnitPrice().GetAmountMinor() != 1500 || it.GetUnitPrice().GetCurrency() != "USD" {
		t.Errorf("CreateItem got %v", c)
	}

	r = h.do("PATCH", "/api/inventory/pad-001", adminToken, `{"available":"25","unitPrice":{"amountMinor":"1700","currency":"USD"}}`)
	if r.status != 200 {
		t.Fatalf("PATCH status = %d %s", r.status, r.body)
	}
	u := <-updated
	paths := u.GetUpdateMask().GetPaths()
	slices.Sort(paths)
	if it := u.GetItem(); it.GetSku() != "pad-001" || it.GetAvailable() != 25 || it.GetUnitPrice().GetAmountMinor() != 1700 ||
		!slices.Equal(paths, []string{"available", "unit_price.amount_minor", "unit_price.currency"}) {
		// grpc-gateway derives the body's leaves; the service folds
		// unit_price.* into unit_price.
		t.Errorf("UpdateItem got %v, mask paths %v; want available and the unit_price leaves", u, paths)
	}
}
