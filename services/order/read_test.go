package order

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
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
		{"other customer", "bob", "customer", o.GetId(), codes.NotFound, ReasonOrderNotFound},
		{"admin", "root", "admin", o.GetId(), codes.OK, ""},
		{"reader", "audit", "reader", o.GetId(), codes.OK, ""},
		{"missing order", "alice", "customer", "ord-missing", codes.NotFound, ReasonOrderNotFound},
		{"empty id", "alice", "customer", "", codes.InvalidArgument, ""},
		{"no identity", "", "", o.GetId(), codes.Unauthenticated, ReasonUnauthenticated},
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
	for i := range n {
		if i != 1 {
			h.clock.Advance(time.Second)
		}
		rec := h.svc.newRecord(customer, fmt.Sprintf("seed-%d", i), orderReq("pm_card_ok", "keyboard-001", 1))
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
		{"token without id", &orderv1.ListOrdersRequest{PageToken: encodePageToken(Cursor{CreateTime: time.Unix(1, 0)})}, "page_token"},
		{"token with bad time", &orderv1.ListOrdersRequest{PageToken: "eC9vcmQtMQ"}, "page_token"}, // "x/ord-1"
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
	f.Add("")
	f.Add(encodePageToken(Cursor{CreateTime: time.Unix(0, 42), ID: "ord-1"}))
	f.Add("%%%")
	f.Fuzz(func(t *testing.T, tok string) {
		c, ok := decodePageToken(tok)
		if !ok || c == nil {
			return
		}
		again, ok := decodePageToken(encodePageToken(*c))
		if !ok || !again.CreateTime.Equal(c.CreateTime) || again.ID != c.ID {
			t.Errorf("decode(encode(%+v)) = %+v, %v", c, again, ok)
		}
	})
}
