package order

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/grpctest"
	"github.com/portico-gateway/portico/internal/protocheck"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

var badFields = grpctest.BadFields

func manyLines(n int) *orderv1.CreateOrderRequest {
	req := &orderv1.CreateOrderRequest{PaymentMethod: "pm_card_ok"}
	for i := range n {
		req.Lines = append(req.Lines, &orderv1.OrderLine{Sku: "sku-" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + string(rune('a'+i/26)), Quantity: 1})
	}
	return req
}

// TestCreateOrderValidation: every bad field is named, and nothing is
// stored, reserved or charged.
func TestCreateOrderValidation(t *testing.T) {
	tests := []struct {
		name       string
		subject    string // "" means no identity
		key        string // "" means no idempotency key
		req        *orderv1.CreateOrderRequest
		wantCode   codes.Code
		wantReason string
		wantFields []string
	}{
		{"no identity", "", "k1", orderReq("pm_card_ok", "keyboard-001", 1), codes.Unauthenticated, reasonUnauthenticated, nil},
		{"no idempotency key", "alice", "", orderReq("pm_card_ok", "keyboard-001", 1), codes.InvalidArgument, reasonIdempotencyKeyMissing, []string{"idempotency_key"}},
		{"idempotency key too long", "alice", strings.Repeat("k", 256), orderReq("pm_card_ok", "keyboard-001", 1), codes.InvalidArgument, "", []string{"idempotency_key"}},
		{"no lines", "alice", "k1", orderReq("pm_card_ok"), codes.InvalidArgument, "", []string{"lines"}},
		{"51 lines", "alice", "k1", manyLines(51), codes.InvalidArgument, "", []string{"lines"}},
		{"empty sku", "alice", "k1", orderReq("pm_card_ok", "", 1), codes.InvalidArgument, "", []string{"lines[0].sku"}},
		{"upper-case sku", "alice", "k1", orderReq("pm_card_ok", "Keyboard-001", 1), codes.InvalidArgument, "", []string{"lines[0].sku"}},
		{"65-character sku", "alice", "k1", orderReq("pm_card_ok", strings.Repeat("a", 65), 1), codes.InvalidArgument, "", []string{"lines[0].sku"}},
		{"duplicate sku", "alice", "k1", orderReq("pm_card_ok", "keyboard-001", 1, "mouse-001", 1, "keyboard-001", 2), codes.InvalidArgument, "", []string{"lines"}},
		{"zero quantity", "alice", "k1", orderReq("pm_card_ok", "keyboard-001", 0), codes.InvalidArgument, "", []string{"lines[0].quantity"}},
		{"negative quantity", "alice", "k1", orderReq("pm_card_ok", "keyboard-001", -1), codes.InvalidArgument, "", []string{"lines[0].quantity"}},
		{"quantity 1001", "alice", "k1", orderReq("pm_card_ok", "keyboard-001", 1001), codes.InvalidArgument, "", []string{"lines[0].quantity"}},
		{"no payment method", "alice", "k1", orderReq("", "keyboard-001", 1), codes.InvalidArgument, "", []string{"payment_method"}},
		{"500 KB payment method", "alice", "k1", orderReq(strings.Repeat("p", 500_000), "keyboard-001", 1), codes.InvalidArgument, "", []string{"payment_method"}},
		{"65-character payment method", "alice", "k1", orderReq(strings.Repeat("p", 65), "keyboard-001", 1), codes.InvalidArgument, "", []string{"payment_method"}},
		{"every field at once", "alice", strings.Repeat("k", 256), orderReq("", "BAD", 1, "mouse-001", 0),
			codes.InvalidArgument, "", []string{"idempotency_key", "lines[0].sku", "lines[1].quantity", "payment_method"}},
	}
	h := newHarness(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.client.CreateOrder(as(t, tt.subject, "customer", tt.key), tt.req)
			if status.Code(err) != tt.wantCode || rpcerr.Reason(err) != tt.wantReason {
				t.Fatalf("CreateOrder() = %v; want %v reason %q", err, tt.wantCode, tt.wantReason)
			}
			if diff := cmp.Diff(tt.wantFields, badFields(err)); diff != "" {
				t.Errorf("bad fields mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if n := len(h.stored()); n != 0 {
		t.Errorf("stored orders = %d, want 0", n)
	}
	if r, c := h.invStub.reserves.Load(), h.payStub.creates.Load(); r != 0 || c != 0 {
		t.Errorf("ReserveStock calls %d, CreatePayment calls %d; want none", r, c)
	}
}

func TestCreateOrderValidLimits(t *testing.T) {
	req := manyLines(50)
	req.Lines[0].Sku = strings.Repeat("a", 64)
	req.Lines[1].Quantity = 1000
	if err := protocheck.Request(req); err != nil {
		t.Errorf("protocheck.Request(50 lines, 64-char sku, quantity 1000) = %v, want nil", err)
	}
}
