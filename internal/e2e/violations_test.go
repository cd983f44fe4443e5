package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/portico-gateway/portico/gateway/jsonwire"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// violation is one bad field as a client sees it: its JSON path and why.
type violation struct{ Field, Detail string }

// TestSameViolations: for each bad message, a direct gRPC caller gets
// INVALID_ARGUMENT whose BadRequest fields, in JSON names, are exactly the
// REST client's 400 errors[], field by field and word for word, in order.
func TestSameViolations(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four processes")
	}
	c := startCluster(t)
	e := startEdge(t, c, noBreaker, nil)
	long := func(n int) string { return strings.Repeat("x", n) }
	price := func(amount int64, currency string) *typev1.Money {
		return &typev1.Money{AmountMinor: amount, Currency: currency}
	}
	lines := func(n int) []*orderv1.OrderLine {
		var ls []*orderv1.OrderLine
		for i := range n {
			ls = append(ls, &orderv1.OrderLine{Sku: "sku-" + strings.Repeat("a", i+1), Quantity: 1})
		}
		return ls
	}
	const alice, admin = "demo-alice-token", "demo-admin-token"
	tests := []struct {
		name   string
		req    proto.Message // the gRPC request; the REST one carries the same fields
		method string        // HTTP method
		path   string        // the REST path, query included
		token  string
	}{
		{name: "order: bad sku, zero quantity, no method", method: "POST", path: "/api/orders", token: alice,
			req: &orderv1.CreateOrderRequest{Lines: []*orderv1.OrderLine{{Sku: "Bad SKU", Quantity: 0}}}},
		{name: "order: 51 lines", method: "POST", path: "/api/orders", token: alice,
			req: &orderv1.CreateOrderRequest{Lines: lines(51), PaymentMethod: "pm_card_ok"}},
		{name: "order: a SKU twice (CEL)", method: "POST", path: "/api/orders", token: alice,
			req: &orderv1.CreateOrderRequest{Lines: append(lines(2), lines(1)...), PaymentMethod: long(65)}},
		{name: "item: every field bad", method: "POST", path: "/api/inventory", token: admin,
			req: &inventoryv1.CreateItemRequest{Item: &inventoryv1.Item{Sku: "", Name: long(201), UnitPrice: price(-1, "us"), Available: 1_000_000_001}}},
		{name: "item: price above the cap (CEL)", method: "POST", path: "/api/inventory", token: admin,
			req: &inventoryv1.CreateItemRequest{Item: &inventoryv1.Item{Sku: "pad-9", Name: "Pad", UnitPrice: price(1_000_000_000_001, "USD")}}},
		{name: "reserve: bad order id, no lines", method: "POST", path: "/api/reservations", token: admin,
			req: &inventoryv1.ReserveStockRequest{OrderId: "o 1"}},
		{name: "payment: zero amount (CEL), lower-case currency", method: "POST", path: "/api/payments", token: admin,
			req: &paymentv1.CreatePaymentRequest{OrderId: "o1", Amount: price(0, "usd"), PaymentMethod: "pm_card_ok"}},
		{name: "list orders: token too long", method: "GET", path: "/api/orders?pageToken=" + long(1025), token: alice,
			req: &orderv1.ListOrdersRequest{PageToken: long(1025)}},
		{name: "get item: sku outside the alphabet", method: "GET", path: "/api/inventory/" + url.PathEscape("BAD_SKU"), token: admin,
			req: &inventoryv1.GetItemRequest{Sku: "BAD_SKU"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, prefix := restBody(t, tt.method, tt.req)
			r := call(t, tt.method, e.url+tt.path, tt.token, body, "Idempotency-Key: same-violations-rest")
			if r.status != 400 {
				t.Fatalf("REST %s %s = %d, want 400; body %s", tt.method, tt.path, r.status, r.body)
			}
			var rest []violation
			errs, _ := r.problem["errors"].([]any)
			for _, x := range errs {
				m, _ := x.(map[string]any)
				f, _ := m["field"].(string)
				d, _ := m["detail"].(string)
				rest = append(rest, violation{f, d})
			}
			subject, role := "alice", "customer"
			if tt.token == admin {
				subject, role = "course-admin", "admin"
			}
			err := invoke(c, as(t, subject, role, "same-violations-grpc"), tt.req)
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("gRPC = %v, want INVALID_ARGUMENT", err)
			}
			var grpc []violation
			for _, d := range status.Convert(err).Details() {
				br, ok := d.(*errdetails.BadRequest)
				if !ok {
					continue
				}
				for _, v := range br.GetFieldViolations() {
					f, _ := jsonwire.FieldPath(tt.req.ProtoReflect().Descriptor(), v.GetField())
					grpc = append(grpc, violation{strings.TrimPrefix(f, prefix), v.GetDescription()})
				}
			}
			if len(grpc) == 0 {
				t.Fatalf("gRPC %v carries no field violations", err)
			}
			if diff := cmp.Diff(grpc, rest); diff != "" {
				t.Errorf("REST errors differ from gRPC violations (-grpc +rest):\n%s", diff)
			}
		})
	}
}

// restBody is req's REST body (its "item" for a route whose body is that
// field, "" for a GET), and the JSON prefix its fields lose there.
func restBody(t *testing.T, method string, req proto.Message) (string, string) {
	t.Helper()
	if method == "GET" {
		return "", ""
	}
	m, prefix := req, ""
	if ci, ok := req.(*inventoryv1.CreateItemRequest); ok {
		m, prefix = ci.GetItem(), "item."
	}
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), prefix
}

// invoke sends req to its RPC on c.
func invoke(c *cluster, ctx context.Context, req proto.Message) error {
	var err error
	switch r := req.(type) {
	case *orderv1.CreateOrderRequest:
		_, err = c.Order.CreateOrder(ctx, r)
	case *orderv1.ListOrdersRequest:
		_, err = c.Order.ListOrders(ctx, r)
	case *inventoryv1.CreateItemRequest:
		_, err = c.Inventory.CreateItem(ctx, r)
	case *inventoryv1.ReserveStockRequest:
		_, err = c.Inventory.ReserveStock(ctx, r)
	case *inventoryv1.GetItemRequest:
		_, err = c.Inventory.GetItem(ctx, r)
	case *paymentv1.CreatePaymentRequest:
		_, err = c.Payment.CreatePayment(ctx, r)
	default:
		panic("invoke: no RPC for " + string(req.ProtoReflect().Descriptor().FullName()))
	}
	return err
}
