package gateway

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/logging"
)

// failFor answers the stubs' error cases by the id or sku they name:
// "missing" is NOT_FOUND with an ErrorInfo, "down" UNAVAILABLE, "bad"
// INVALID_ARGUMENT with a BadRequest.
func failFor(id string) error {
	switch id {
	case "missing":
		st, _ := status.New(codes.NotFound, "not found").WithDetails(&errdetails.ErrorInfo{Reason: "ITEM_NOT_FOUND", Domain: "inventory.portico.dev"})
		return st.Err()
	case "down":
		return status.Error(codes.Unavailable, "down")
	case "bad":
		st, _ := status.New(codes.InvalidArgument, "bad").WithDetails(&errdetails.BadRequest{
			FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "item.name", Description: "too long"}}})
		return st.Err()
	}
	return nil
}

// echoStubs makes every stub RPC answer from its request, the same on
// both paths.
func echoStubs(h *harness) {
	h.inv.getItem = func(_ context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		return &inventoryv1.Item{Sku: r.GetSku(), Name: "Keyboard"}, failFor(r.GetSku())
	}
	h.inv.listItems = func(_ context.Context, r *inventoryv1.ListItemsRequest) (*inventoryv1.ListItemsResponse, error) {
		return &inventoryv1.ListItemsResponse{Items: []*inventoryv1.Item{{Sku: "a"}}, NextPageToken: r.GetPageToken() + "x"}, nil
	}
	h.inv.createItem = func(_ context.Context, r *inventoryv1.CreateItemRequest) (*inventoryv1.Item, error) {
		return r.GetItem(), failFor(r.GetItem().GetSku())
	}
	h.inv.updateItem = func(_ context.Context, r *inventoryv1.UpdateItemRequest) (*inventoryv1.Item, error) {
		it := r.GetItem()
		it.Name = strings.Join(r.GetUpdateMask().GetPaths(), ",")
		return it, failFor(it.GetSku())
	}
	h.inv.reserveStock = func(_ context.Context, r *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
		return &inventoryv1.Reservation{Id: "res-1", OrderId: r.GetOrderId()}, failFor(r.GetOrderId())
	}
	h.inv.getReservation = func(_ context.Context, r *inventoryv1.GetReservationRequest) (*inventoryv1.Reservation, error) {
		return &inventoryv1.Reservation{Id: r.GetId()}, failFor(r.GetId())
	}
	h.inv.commitReservation = func(_ context.Context, r *inventoryv1.CommitReservationRequest) (*inventoryv1.Reservation, error) {
		return &inventoryv1.Reservation{Id: r.GetId()}, failFor(r.GetId())
	}
	h.order.createOrder = func(_ context.Context, r *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
		return &orderv1.Order{Id: "ord-1", Status: orderv1.Order_STATUS_CONFIRMED}, nil
	}
	h.order.getOrder = func(_ context.Context, r *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		return &orderv1.Order{Id: r.GetId()}, failFor(r.GetId())
	}
	h.order.listOrders = func(_ context.Context, r *orderv1.ListOrdersRequest) (*orderv1.ListOrdersResponse, error) {
		return &orderv1.ListOrdersResponse{Orders: []*orderv1.Order{{Id: "o"}}}, nil
	}
	h.order.cancelOrder = func(_ context.Context, r *orderv1.CancelOrderRequest) (*orderv1.Order, error) {
		return &orderv1.Order{Id: r.GetId()}, failFor(r.GetId())
	}
	h.pay.getPayment = func(_ context.Context, r *paymentv1.GetPaymentRequest) (*paymentv1.Payment, error) {
		return &paymentv1.Payment{Id: r.GetId()}, failFor(r.GetId())
	}
	h.pay.listPayments = func(_ context.Context, r *paymentv1.ListPaymentsRequest) (*paymentv1.ListPaymentsResponse, error) {
		return &paymentv1.ListPaymentsResponse{}, nil
	}
}

// equivRequest is one request of the corpus.
type equivRequest struct {
	method, path, token, body string
	header                    []string
}

// equivCorpus covers every built-in route with good requests, the edge's
// own 4xx answers and upstream errors.
var equivCorpus = []equivRequest{
	{"GET", "/api/inventory/kb-1", readerToken, "", nil},
	{"HEAD", "/api/inventory/kb-1", readerToken, "", nil},
	{"GET", "/api/inventory/missing", readerToken, "", nil},
	{"GET", "/api/inventory/down", readerToken, "", nil},
	{"GET", "/api/inventory?pageSize=5&pageToken=t", readerToken, "", nil},
	{"GET", "/api/inventory?pageSize=x", readerToken, "", nil},
	{"GET", "/api/inventory?nope=1", readerToken, "", nil},
	{"POST", "/api/inventory", adminToken, `{"sku":"kb-2","name":"Mouse"}`, nil},
	{"POST", "/api/inventory", adminToken, `{"sku":"bad","name":"Mouse"}`, nil},
	{"POST", "/api/inventory", adminToken, `{"sku":`, nil},
	{"POST", "/api/inventory", adminToken, `{"sku":"kb-2","extra":1}`, nil},
	{"POST", "/api/inventory", readerToken, `{"sku":"kb-2"}`, nil},
	{"POST", "/api/inventory", adminToken, `{"sku":"kb-2"}`, []string{"Content-Type: text/plain"}},
	{"PATCH", "/api/inventory/kb-1", adminToken, `{"name":"New"}`, nil},
	{"PATCH", "/api/inventory/kb-1?updateMask=name", adminToken, `{"name":"New"}`, nil},
	{"PATCH", "/api/inventory/kb-1", adminToken, `{}`, nil},
	{"POST", "/api/reservations", adminToken, `{"orderId":"o-1","lines":[{"sku":"a","quantity":1}]}`, nil},
	{"GET", "/api/reservations/res-1", adminToken, "", nil},
	{"POST", "/api/reservations/res-1:commit", adminToken, `{}`, nil},
	{"POST", "/api/reservations/missing:commit", adminToken, `{}`, nil},
	{"POST", "/api/reservations/res-1:explode", adminToken, `{}`, nil},
	{"POST", "/api/orders", aliceToken, `{"lines":[{"sku":"a","quantity":1}],"paymentMethod":"card"}`, []string{"Idempotency-Key: k-1"}},
	{"POST", "/api/orders", aliceToken, `{"lines":[{"sku":"a","quantity":1}]}`, nil},
	{"GET", "/api/orders/ord-1", aliceToken, "", nil},
	{"GET", "/api/orders/down", aliceToken, "", nil},
	{"GET", "/api/orders", aliceToken, "", nil},
	{"POST", "/api/orders/ord-1:cancel", aliceToken, `{}`, nil},
	{"DELETE", "/api/orders/ord-1", aliceToken, "", nil},
	{"GET", "/api/orders/ord-1", "", "", nil},
	{"GET", "/api/payments/pay-1", adminToken, "", nil},
	{"GET", "/api/payments", adminToken, "", nil},
	{"GET", "/api/nowhere", adminToken, "", nil},
	{"GET", "/api/orders/ord-1", aliceToken, "", []string{"Grpc-Timeout: bogus"}},
}

// traceIDs are the per-request values the two paths cannot share.
var traceIDs = regexp.MustCompile(`[0-9a-f]{32}`)

// TestDescriptorPathEquivalence: every built-in route answers the same
// status, headers (Date and the trace headers aside) and body bytes
// (the trace id aside) through the generated handlers and through the
// descriptor path (services from a descriptor set, and by reflection).
func TestDescriptorPathEquivalence(t *testing.T) {
	gen := newHarness(t, setup{})
	echoStubs(gen)
	for _, mode := range []string{"descriptors", "reflection"} {
		t.Run(mode, func(t *testing.T) {
			desc := newHarness(t, setup{cfg: func(c *config.Config) { toDescriptors(t, c, mode == "reflection") }})
			echoStubs(desc)
			if n := len(builtIn(desc.srv.snap.Load().cfg, registrations)); n != 0 {
				t.Fatalf("%d built-in registrations still serve: the descriptor path is not under test", n)
			}
			codes := map[int]int{}
			for _, rq := range equivCorpus {
				a := gen.do(rq.method, rq.path, rq.token, rq.body, rq.header...)
				b := desc.do(rq.method, rq.path, rq.token, rq.body, rq.header...)
				codes[a.status/100]++
				if d := equivDiff(a, b); d != "" {
					t.Errorf("%s %s %s: generated and descriptor paths differ: %s", rq.method, rq.path, rq.body, d)
				}
			}
			if codes[2] < 10 || codes[4] < 10 || codes[5] < 1 {
				t.Errorf("answers by class = %v: the corpus lost its good requests, 4xx or upstream errors", codes)
			}
		})
	}
}

// equivDiff describes how two answers differ, "" when they do not.
func equivDiff(a, b response) string {
	if a.status != b.status {
		return "status " + http.StatusText(a.status) + " vs " + http.StatusText(b.status) + "\n" + string(a.body) + "\n" + string(b.body)
	}
	ha, hb := a.header.Clone(), b.header.Clone()
	for _, h := range []string{"Date", "X-Trace-Id", "Traceparent"} {
		ha.Del(h)
		hb.Del(h)
	}
	var sa, sb strings.Builder
	_ = ha.Write(&sa)
	_ = hb.Write(&sb)
	if sa.String() != sb.String() {
		return "headers\n" + sa.String() + "vs\n" + sb.String()
	}
	ba, bb := traceIDs.ReplaceAll(a.body, []byte("T")), traceIDs.ReplaceAll(b.body, []byte("T"))
	if !bytes.Equal(ba, bb) {
		return "body\n" + string(ba) + "\nvs\n" + string(bb)
	}
	return ""
}

// FuzzDescriptorPathEquivalence sends generated requests (method, path,
// query, body) to the generated and the descriptor path and requires the
// same answer.
func FuzzDescriptorPathEquivalence(f *testing.F) {
	for _, rq := range equivCorpus {
		f.Add(rq.method, rq.path, rq.body)
	}
	// a fuzz worker runs millions of inputs: logs go nowhere, not into
	// the harness's buffer, which would grow without bound
	quiet := []Option{WithLogger(logging.New(io.Discard, "gateway", slog.LevelError))}
	gen := newHarness(f, setup{opts: quiet})
	echoStubs(gen)
	desc := newHarness(f, setup{opts: quiet, cfg: func(c *config.Config) { toDescriptors(f, c, false) }})
	echoStubs(desc)
	methods := []string{"GET", "POST", "PATCH", "DELETE", "HEAD"}
	f.Fuzz(func(t *testing.T, method, path, body string) {
		if !slices.Contains(methods, method) || !strings.HasPrefix(path, "/api/") || strings.ContainsAny(path, " #\x00\r\n\t") || len(path) > 512 || len(body) > 4096 {
			t.Skip()
		}
		if _, err := url.ParseRequestURI(path); err != nil {
			t.Skip()
		}
		gen.t, desc.t = t, t
		a := gen.do(method, path, adminToken, body)
		b := desc.do(method, path, adminToken, body)
		if d := equivDiff(a, b); d != "" {
			t.Errorf("%s %s %q: generated and descriptor paths differ: %s", method, path, body, d)
		}
	})
}

// BenchmarkPaths is the CPU per request of GetItem and CreateOrder
// through the whole edge, on the generated handlers and on the
// descriptor path (make bench-edge's figures for issue 23):
//
//	see docs/performance.md: the two paths in alternating processes
func BenchmarkPaths(b *testing.B) {
	for _, path := range []string{"generated", "descriptors"} {
		h := newHarness(b, setup{cfg: func(c *config.Config) {
			if path == "descriptors" {
				toDescriptors(b, c, false)
			}
		}})
		echoStubs(h)
		handler := h.srv.Handler()
		b.Run("GetItem/"+path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, "/api/inventory/kb-1", nil)
				req.Header.Set("Authorization", "Bearer "+readerToken)
				rec := httptest.NewRecorder()
				handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
		b.Run("CreateOrder/"+path, func(b *testing.B) {
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
		})
	}
}
