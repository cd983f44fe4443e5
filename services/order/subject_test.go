package order

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// TestOwnershipBySubjectAsSent: orders belong to the subject exactly as
// the caller's identity states it: " alice" and "alice " are nobody
// (never trimmed into alice), and the edge's namespaced JWT subject
// "jwt:alice" is another customer than the API-key user alice, who still
// owns her orders.
func TestOwnershipBySubjectAsSent(t *testing.T) {
	h := newHarness(t)
	mine, err := h.client.CreateOrder(alice(t, "k1"), orderReq("pm_card_ok", "keyboard-001", 1))
	if err != nil {
		t.Fatalf("CreateOrder as alice: %v", err)
	}
	theirs, err := h.client.CreateOrder(as(t, "jwt:alice", "customer", "k2"), orderReq("pm_card_ok", "keyboard-001", 1))
	if err != nil || theirs.GetCustomer() != "jwt:alice" {
		t.Fatalf("CreateOrder as jwt:alice = %v, %v; want an order of jwt:alice", theirs, err)
	}
	tests := []struct {
		subject   string
		get       codes.Code // GetOrder of alice's order
		listed    int        // ListOrders
		canCancel bool
	}{
		{"alice", codes.OK, 1, true},
		{" alice", codes.Unauthenticated, 0, false},
		{"alice ", codes.Unauthenticated, 0, false},
		{"jwt:alice", codes.NotFound, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.subject, func(t *testing.T) {
			_, err := h.client.GetOrder(as(t, tt.subject, "customer", ""), &orderv1.GetOrderRequest{Id: mine.GetId()})
			if status.Code(err) != tt.get {
				t.Errorf("GetOrder(alice's) as %q = %v, want %v", tt.subject, err, tt.get)
			}
			resp, err := h.client.ListOrders(as(t, tt.subject, "customer", ""), &orderv1.ListOrdersRequest{})
			if len(resp.GetOrders()) != tt.listed {
				t.Errorf("ListOrders as %q = %d orders (%v), want %d", tt.subject, len(resp.GetOrders()), err, tt.listed)
			}
			for _, o := range resp.GetOrders() {
				if o.GetCustomer() != tt.subject {
					t.Errorf("%q sees %q's order %s", tt.subject, o.GetCustomer(), o.GetId())
				}
			}
			_, err = h.client.CancelOrder(as(t, tt.subject, "customer", "c-"+tt.subject), &orderv1.CancelOrderRequest{Id: mine.GetId()})
			if status.Code(err) != tt.get {
				t.Errorf("CancelOrder(alice's) as %q = %v, want %v", tt.subject, err, tt.get)
			}
		})
	}
}
