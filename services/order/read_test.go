package order

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/pagebudget"
	"github.com/portico-gateway/portico/internal/rpcerr"
	"github.com/portico-gateway/portico/internal/sqlitedb"
)

func TestGetOrderOwnership(t *testing.T) {
	h := newHarness(t)
	o, err := h.client.CreateOrder(alice(t, "k1"), orderReq("pm_card_ok", "keyboard-001", 1))
	if err != nil {
		t.Fatalf("CreateOrder: %v", err)
	}
	tests := []struct {
		name, subject, role, id string
		wantCode                codes.Code
		wantReason              string
	}{
		{"owner", "alice", "customer", o.GetId(), codes.OK, ""},
		{"other customer", "bob", "customer", o.GetId(), codes.NotFound, reasonOrderNotFound},
		{"admin", "root", "admin", o.GetId(), codes.OK, ""},
		{"reader", "audit", "reader", o.GetId(), codes.OK, ""},
		{"missing order", "alice", "customer", "ord-missing", codes.NotFound, reasonOrderNotFound},
		{"empty id", "alice", "customer", "", codes.InvalidArgument, ""},
		{"no identity", "", "", o.GetId(), codes.Unauthenticated, reasonUnauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.client.GetOrder(as(t, tt.subject, tt.role, ""), &orderv1.GetOrderRequest{Id: tt.id})
			if status.Code(err) != tt.wantCode || rpcerr.Reason(err) != tt.wantReason {
				t.Fatalf("GetOrder(%q) as %s = %v; want %v %q", tt.id, tt.subject, err, tt.wantCode, tt.wantReason)
			}
			if err == nil && got.GetId() != o.GetId() {
				t.Errorf("GetOrder() = %s, want %s", got.GetId(), o.GetId())
			}
		})
	}
}

func TestListOrdersScope(t *testing.T) {
	h := newHarness(t)
	for i, who := range []string{"alice", "bob", "alice"} {
		if _, err := h.client.CreateOrder(as(t, who, "customer", fmt.Sprint(i)), orderReq("pm_card_ok", "keyboard-001", 1)); err != nil {
			t.Fatalf("CreateOrder: %v", err)
		}
	}
	tests := []struct {
		subject, role string
		want          int
	}{{"alice", "customer", 2}, {"bob", "customer", 1}, {"carol", "customer", 0}, {"root", "admin", 3}, {"audit", "reader", 3}}
	for _, tt := range tests {
		t.Run(tt.subject, func(t *testing.T) {
			resp, err := h.client.ListOrders(as(t, tt.subject, tt.role, ""), &orderv1.ListOrdersRequest{})
			if err != nil || len(resp.GetOrders()) != tt.want {
				t.Fatalf("ListOrders() as %s = %d orders, %v; want %d", tt.subject, len(resp.GetOrders()), err, tt.want)
			}
			for _, o := range resp.GetOrders() {
				if tt.role == "customer" && o.GetCustomer() != tt.subject {
					t.Errorf("%s sees %s's order %s", tt.subject, o.GetCustomer(), o.GetId())
				}
			}
		})
	}
}

// seed stores n PENDING orders of customer directly, one second apart,
// except that the two oldest share a create time (the id breaks the tie).
func seed(t *testing.T, h *harness, customer string, n int) {
	t.Helper()
	base := time.Now()
	for i := range n {
		rec := h.svc.newRecord(customer, fmt.Sprintf("seed-%d", i), orderReq("pm_card_ok", "keyboard-001", 1))
		rec.Order.CreateTime = timestamppb.New(base.Add(time.Duration(max(i, 1)) * time.Second))
		rec.Order.UpdateTime = rec.Order.GetCreateTime()
		if _, err := h.store.Create(context.Background(), rec); err != nil {
			t.Fatalf("store.Create: %v", err)
		}
	}
}

func TestListOrdersPagination(t *testing.T) {
	h := newHarness(t)
	seed(t, h, "alice", 125)
	all := h.stored()
	var want []string
	for _, r := range all {
		want = append(want, r.Order.GetId())
	}
	tests := []struct {
		name      string
		size      int32
		wantPages []int
	}{
		{"default 20", 0, []int{20, 20, 20, 20, 20, 20, 5}},
		{"size 50", 50, []int{50, 50, 25}},
		{"size 62 splits the tie", 62, []int{62, 62, 1}},
		{"above 100 clamps", 1000, []int{100, 25}},
		{"size 100", 100, []int{100, 25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var pages []int
			tok := ""
			for range 20 {
				resp, err := h.client.ListOrders(alice(t, ""), &orderv1.ListOrdersRequest{PageSize: tt.size, PageToken: tok})
				if err != nil {
					t.Fatalf("ListOrders(%d, %q): %v", tt.size, tok, err)
				}
				pages = append(pages, len(resp.GetOrders()))
				for _, o := range resp.GetOrders() {
					got = append(got, o.GetId())
				}
				if tok = resp.GetNextPageToken(); tok == "" {
					break
				}
			}
			if diff := cmp.Diff(tt.wantPages, pages); diff != "" {
				t.Errorf("page sizes mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("orders across pages mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListOrdersOrder(t *testing.T) {
	h := newHarness(t)
	seed(t, h, "alice", 3)
	recs := h.stored()
	for i := 1; i < len(recs); i++ {
		a, b := recs[i-1].Order, recs[i].Order
		at, bt := a.GetCreateTime().AsTime(), b.GetCreateTime().AsTime()
		if at.Before(bt) || at.Equal(bt) && a.GetId() < b.GetId() {
			t.Errorf("order %d (%v %s) listed before %d (%v %s)", i-1, at, a.GetId(), i, bt, b.GetId())
		}
	}
}

func TestListOrdersInvalid(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name      string
		req       *orderv1.ListOrdersRequest
		wantField string
	}{
		{"negative size", &orderv1.ListOrdersRequest{PageSize: -1}, "page_size"},
		{"token not base64", &orderv1.ListOrdersRequest{PageToken: "%%%"}, "page_token"},
		{"token without id", &orderv1.ListOrdersRequest{PageToken: h.svc.encodePageToken(Cursor{CreateTime: time.Unix(1, 0)})}, "page_token"},
		{"token with bad time", &orderv1.ListOrdersRequest{PageToken: "eC9vcmQtMQ"}, "page_token"}, // "x/ord-1"
		{"token with a malformed id", &orderv1.ListOrdersRequest{PageToken: h.svc.encodePageToken(Cursor{CreateTime: time.Unix(1, 0), ID: "ord 1/x"})}, "page_token"},
		{"token with a 65 character id", &orderv1.ListOrdersRequest{PageToken: h.svc.encodePageToken(Cursor{CreateTime: time.Unix(1, 0), ID: strings.Repeat("o", 65)})}, "page_token"},
		// A client cannot craft a token: the bare base64 of a real
		// position ("1/ord-1") was accepted before tokens were signed.
		{"crafted token", &orderv1.ListOrdersRequest{PageToken: base64.RawURLEncoding.EncodeToString([]byte("1/ord-1"))}, "page_token"},
		{"tampered token", &orderv1.ListOrdersRequest{PageToken: tamper(h.svc.encodePageToken(Cursor{CreateTime: time.Unix(1, 0), ID: "ord-1"}))}, "page_token"},
		{"token far too long", &orderv1.ListOrdersRequest{PageToken: strings.Repeat("A", 100_000)}, "page_token"},
		// Only the canonical encoding of "1/ord-1" ("MS9vcmQtMQ"): the
		// standard decoder lets a newline and stray padding bits through.
		{"token with a newline", &orderv1.ListOrdersRequest{PageToken: "MS9v\ncmQtMQ"}, "page_token"},
		{"token with stray bits", &orderv1.ListOrdersRequest{PageToken: "MS9vcmQtMR"}, "page_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.client.ListOrders(alice(t, ""), tt.req)
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("ListOrders() = %v, want INVALID_ARGUMENT", err)
			}
			if diff := cmp.Diff([]string{tt.wantField}, badFields(err)); diff != "" {
				t.Errorf("bad fields mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzPageToken(f *testing.F) {
	svc := &Service{settings: defaultSettings()}
	f.Add("")
	f.Add(svc.encodePageToken(Cursor{CreateTime: time.Unix(0, 42), ID: "ord-1"}))
	f.Add("%%%")
	f.Fuzz(func(t *testing.T, tok string) {
		c, ok := svc.decodePageToken(tok)
		if !ok || c == nil {
			return
		}
		again, ok := svc.decodePageToken(svc.encodePageToken(*c))
		if !ok || !again.CreateTime.Equal(c.CreateTime) || again.ID != c.ID {
			t.Errorf("decode(encode(%+v)) = %+v, %v", c, again, ok)
		}
	})
}

// TestOrderIDBounded: GetOrder and CancelOrder take only 1-64 characters of
// the id alphabet, and never echo a malformed id; a NOT_FOUND echoes at most
// the 64 characters of a well-formed one.
func TestOrderIDBounded(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("o", 5000)
	tests := []struct {
		name     string
		id       string
		wantCode codes.Code
	}{
		{"5000 characters", long, codes.InvalidArgument},
		{"65 characters", "ord-" + strings.Repeat("a", 61), codes.InvalidArgument},
		{"64 characters", "ord-" + strings.Repeat("a", 60), codes.NotFound},
		{"space and slash", "ord 1/x", codes.InvalidArgument},
		{"markup", "<script>", codes.InvalidArgument},
		{"newline", "ord-1\n", codes.InvalidArgument},
		{"non-ASCII", "ord-é", codes.InvalidArgument},
		{"underscore and upper case", "ORD_1", codes.NotFound},
	}
	calls := map[string]func(ctx context.Context, id string) error{
		"GetOrder": func(ctx context.Context, id string) error {
			_, err := h.client.GetOrder(ctx, &orderv1.GetOrderRequest{Id: id})
			return err
		},
		"CancelOrder": func(ctx context.Context, id string) error {
			_, err := h.client.CancelOrder(ctx, &orderv1.CancelOrderRequest{Id: id})
			return err
		},
	}
	for _, tt := range tests {
		for name, call := range calls {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				err := call(alice(t, ""), tt.id)
				if got := status.Code(err); got != tt.wantCode {
					t.Fatalf("%s(%.20q) = %v, want %v", name, tt.id, err, tt.wantCode)
				}
				msg := status.Convert(err).Message()
				if tt.wantCode == codes.InvalidArgument {
					if diff := cmp.Diff([]string{"id"}, badFields(err)); diff != "" {
						t.Errorf("bad fields mismatch (-want +got):\n%s", diff)
					}
					if strings.Contains(msg, tt.id) {
						t.Errorf("%s echoes the malformed id: %q", name, msg)
					}
				}
				if len(msg) > 200 {
					t.Errorf("%s message is %d bytes, want a bounded one", name, len(msg))
				}
			})
		}
	}
}

// FuzzListOrdersPageToken feeds ListOrders any page token: the answer is
// INVALID_ARGUMENT naming page_token, or a valid page of orders strictly
// after the token's position, newest first; never a panic or another code.
func FuzzListOrdersPageToken(f *testing.F) {
	store, err := OpenSQLite(context.Background(), sqlitedb.Memory)
	if err != nil {
		f.Fatalf("OpenSQLite: %v", err)
	}
	f.Cleanup(func() { store.Close() })
	svc, err := New(store, inventoryv1.NewInventoryServiceClient(nil), paymentv1.NewPaymentServiceClient(nil))
	if err != nil {
		f.Fatalf("New: %v", err)
	}
	var mid Cursor
	for i := range 7 {
		rec := svc.newRecord("alice", fmt.Sprintf("seed-%d", i), orderReq("pm_card_ok", "keyboard-001", 1))
		rec.Order.CreateTime = timestamppb.New(time.Unix(1_700_000_001+int64(i), 0)) // one second apart
		rec.Order.UpdateTime = rec.Order.GetCreateTime()
		if _, err := store.Create(context.Background(), rec); err != nil {
			f.Fatalf("store.Create: %v", err)
		}
		if i == 3 {
			mid = Cursor{CreateTime: rec.Order.GetCreateTime().AsTime(), ID: rec.Order.GetId()}
		}
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-portico-subject", "alice", "x-portico-role", "customer"))
	for _, seed := range []string{
		"", svc.encodePageToken(mid), svc.encodePageToken(Cursor{CreateTime: time.Unix(0, -1), ID: "ord-1"}),
		svc.encodePageToken(Cursor{CreateTime: time.Unix(1<<40, 0), ID: strings.Repeat("z", 64)}),
		svc.encodePageToken(Cursor{CreateTime: time.Unix(1, 0), ID: strings.Repeat("z", 65)}),
		"%%%", "eC9vcmQtMQ", "MTIzLw", "LTkyMjMzNzIwMzY4NTQ3NzU4MDgvYQ",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		resp, err := svc.ListOrders(ctx, &orderv1.ListOrdersRequest{PageSize: 3, PageToken: tok})
		if err != nil {
			if status.Code(err) != codes.InvalidArgument || !slices.Equal(badFields(err), []string{"page_token"}) {
				t.Fatalf("ListOrders(token %q) = %v; want INVALID_ARGUMENT naming page_token", tok, err)
			}
			return
		}
		after, ok := svc.decodePageToken(tok)
		if !ok {
			t.Fatalf("ListOrders accepted token %q that decodePageToken rejects", tok)
		}
		orders := resp.GetOrders()
		if len(orders) > 3 {
			t.Fatalf("ListOrders(page_size 3) = %d orders", len(orders))
		}
		prev := after
		for _, o := range orders {
			c := Cursor{CreateTime: o.GetCreateTime().AsTime(), ID: o.GetId()}
			if prev != nil && !before(c, *prev) {
				t.Fatalf("ListOrders(token %q) = order %+v, not after %+v", tok, c, *prev)
			}
			prev = &c
		}
		if next := resp.GetNextPageToken(); next != "" {
			if c, ok := svc.decodePageToken(next); !ok || c.ID != orders[len(orders)-1].GetId() {
				t.Fatalf("next_page_token %q decodes to %+v, %v; want the last order", next, c, ok)
			}
		}
	})
}

// before reports whether a comes after b in the newest-first order.
func before(a, b Cursor) bool {
	return a.CreateTime.Before(b.CreateTime) || a.CreateTime.Equal(b.CreateTime) && a.ID < b.ID
}

// TestListOrdersByteBudget: however large the stored orders are (payment
// methods stored before they were bounded), every page stays within
// pagebudget.MaxBytes and the page tokens walk every order exactly once.
func TestListOrdersByteBudget(t *testing.T) {
	maximal := orderReq(strings.Repeat("p", 64))
	for i := range 50 {
		maximal.Lines = append(maximal.Lines, &orderv1.OrderLine{Sku: fmt.Sprintf("%062d-%d", i, i%10), Quantity: 1000})
	}
	tests := []struct {
		name string
		req  *orderv1.CreateOrderRequest
		n    int
		size int32
	}{
		{"700 KB payment methods, default page", orderReq(strings.Repeat("p", 700_000), "keyboard-001", 1), 8, 0},
		{"maximal valid orders, page of 100", maximal, 150, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t)
				for i := range tt.n {
					time.Sleep(time.Second) // distinct create times
					rec := h.svc.newRecord("alice", fmt.Sprint("k", i), tt.req)
					if _, err := h.store.Create(context.Background(), rec); err != nil {
						t.Fatalf("store.Create: %v", err)
					}
				}
				seen := map[string]bool{}
				tok := ""
				for pages := 0; ; pages++ {
					if pages > tt.n {
						t.Fatalf("more pages than orders")
					}
					resp, err := h.client.ListOrders(alice(t, ""), &orderv1.ListOrdersRequest{PageSize: tt.size, PageToken: tok})
					if err != nil {
						t.Fatalf("ListOrders(page %d) = %v, want a page", pages, err)
					}
					if n := proto.Size(resp); n > pagebudget.MaxBytes {
						t.Errorf("page %d encodes to %d bytes, want at most %d", pages, n, pagebudget.MaxBytes)
					}
					for _, o := range resp.GetOrders() {
						if seen[o.GetId()] {
							t.Errorf("order %s listed twice", o.GetId())
						}
						seen[o.GetId()] = true
					}
					if tok = resp.GetNextPageToken(); tok == "" {
						break
					}
				}
				if len(seen) != tt.n {
					t.Errorf("listed %d orders, want %d", len(seen), tt.n)
				}
			})
		})
	}
}

// TestListPaymentsFollowsPages: the saga sees every payment of an order,
// however many pages the payment service splits them into.
func TestListPaymentsFollowsPages(t *testing.T) {
	h := newHarness(t)
	for i, st := range []paymentv1.Payment_Status{paymentv1.Payment_STATUS_DECLINED, paymentv1.Payment_STATUS_DECLINED, paymentv1.Payment_STATUS_CAPTURED} {
		h.pay.all = append(h.pay.all, &paymentv1.Payment{Id: fmt.Sprint("pay-", i), OrderId: "ord-paged", Status: st})
	}
	h.pay.all = append(h.pay.all, &paymentv1.Payment{Id: "pay-other", OrderId: "ord-other"})
	pays, err := h.svc.listPayments(context.Background(), "ord-paged")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range pays {
		ids = append(ids, p.GetId())
	}
	if diff := cmp.Diff([]string{"pay-0", "pay-1", "pay-2"}, ids); diff != "" {
		t.Errorf("listPayments (-want +got):\n%s", diff)
	}
}

// TestListPaymentsStopsWithoutProgress: a payment service whose pages do
// not move on (the same token again, an empty page that still has a token,
// or pages without end) is an error after a bounded number of calls, not a
// loop that lasts, collecting pages, until the saga's budget runs out.
func TestListPaymentsStopsWithoutProgress(t *testing.T) {
	pay := []*paymentv1.Payment{{Id: "pay-0", OrderId: "ord-1", Status: paymentv1.Payment_STATUS_CAPTURED}}
	tests := []struct {
		name      string
		page      func(call int) *paymentv1.ListPaymentsResponse
		wantCalls int
	}{
		{"same token again", func(int) *paymentv1.ListPaymentsResponse {
			return &paymentv1.ListPaymentsResponse{Payments: pay, NextPageToken: "again"}
		}, 2},
		{"empty page with a token", func(call int) *paymentv1.ListPaymentsResponse {
			return &paymentv1.ListPaymentsResponse{NextPageToken: fmt.Sprint(call)}
		}, 1},
		{"pages without end", func(call int) *paymentv1.ListPaymentsResponse {
			return &paymentv1.ListPaymentsResponse{Payments: pay, NextPageToken: fmt.Sprint(call)}
		}, maxPaymentPages},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			var calls atomic.Int32
			h.payStub.set(func(k *payHooks) {
				k.list = func(context.Context, *paymentv1.ListPaymentsRequest) (*paymentv1.ListPaymentsResponse, error) {
					n := int(calls.Add(1))
					if n > 10*maxPaymentPages {
						return nil, status.Error(codes.Unavailable, "the test's own stop")
					}
					return tt.page(n), nil
				}
			})
			pays, err := h.svc.listPayments(t.Context(), "ord-1")
			if err == nil || int(calls.Load()) != tt.wantCalls {
				t.Errorf("listPayments() = %d payments, %v after %d calls; want an error after %d calls", len(pays), err, calls.Load(), tt.wantCalls)
			}
		})
	}
}

// tamper flips one bit of a token's first byte, keeping it base64url.
func tamper(tok string) string {
	b, _ := base64.RawURLEncoding.DecodeString(tok)
	b[0] ^= 1
	return base64.RawURLEncoding.EncodeToString(b)
}
