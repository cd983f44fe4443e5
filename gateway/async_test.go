package gateway

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/prefer"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestRespondAsync: Prefer: respond-async reaches the order service as
// metadata; when the service applies it the edge answers 202 with Location
// and Preference-Applied, otherwise what the service answered (201, 503).
// A malformed or oversized Prefer is a 400 before any call; unknown
// preferences are ignored, and so is a respond-async carrying a value
// (RFC 7240 defines none: "respond-async=false" must not be applied).
func TestRespondAsync(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.createOrder = func(ctx context.Context, _ *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		if got := md.Get(prefer.MetadataKey); len(got) == 1 && got[0] == prefer.RespondAsync {
			_ = grpc.SetHeader(ctx, metadata.Pairs(prefer.AppliedKey, prefer.RespondAsync))
			return &orderv1.Order{Id: "ord-async", Status: orderv1.Order_STATUS_ACCEPTED}, nil
		} else if len(got) > 0 {
			t.Errorf("prefer metadata = %q, want only respond-async", got)
		}
		return nil, rpcerr.WithRetryInfo(rpcerr.Fail("order.portico.dev", typev1.Reason_REASON_INVENTORY_UNAVAILABLE, "inventory is unavailable"), 1e9)
	}
	tests := []struct {
		name            string
		prefer          []string // Prefer field lines
		wantStatus      int
		wantApplied     string
		wantLocation    string
		wantOrderStatus string
	}{
		{"respond-async", []string{"respond-async"}, 202, "respond-async", "/api/orders/ord-async", "ACCEPTED"},
		{"in a list with params", []string{"wait=10, Respond-Async; x=\"a,b\""}, 202, "respond-async", "/api/orders/ord-async", "ACCEPTED"},
		{"on a second line", []string{"wait=10", "respond-async"}, 202, "respond-async", "/api/orders/ord-async", "ACCEPTED"},
		{"empty quoted value", []string{`respond-async=""`}, 202, "respond-async", "/api/orders/ord-async", "ACCEPTED"},
		{"no preference", nil, 503, "", "", ""},
		{"unknown only", []string{"return=minimal"}, 503, "", "", ""},
		{"valued false", []string{"respond-async=false"}, 503, "", "", ""},
		{"valued true", []string{"respond-async=true"}, 503, "", "", ""},
		{"valued quoted", []string{`respond-async="yes"`}, 503, "", "", ""},
		{"valued first", []string{"respond-async=false, respond-async"}, 503, "", "", ""},
		{"valued first over lines", []string{"respond-async=0", "respond-async"}, 503, "", "", ""},
		{"malformed", []string{`"respond-async"`}, 400, "", "", ""},
		{"too many", []string{strings.Repeat("a,", prefer.MaxPreferences) + "respond-async"}, 400, "", "", ""},
		{"too long", []string{"respond-async; p=" + strings.Repeat("x", prefer.MaxBytes)}, 400, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := []string{"Idempotency-Key: k-" + strings.ReplaceAll(tt.name, " ", "-")}
			for _, l := range tt.prefer {
				hdr = append(hdr, "Prefer: "+l)
			}
			r := h.do("POST", "/api/orders", aliceToken, orderBody, hdr...)
			if r.status != tt.wantStatus {
				t.Fatalf("status = %d %s, want %d", r.status, r.body, tt.wantStatus)
			}
			if got := r.header.Get("Preference-Applied"); got != tt.wantApplied {
				t.Errorf("Preference-Applied = %q, want %q", got, tt.wantApplied)
			}
			if got := r.header.Get("Location"); got != tt.wantLocation {
				t.Errorf("Location = %q, want %q", got, tt.wantLocation)
			}
			if tt.wantOrderStatus != "" && r.json(t)["status"] != tt.wantOrderStatus {
				t.Errorf("body = %s, want status %s", r.body, tt.wantOrderStatus)
			}
			if r.status == 400 && !strings.Contains(r.header.Get("Content-Type"), "problem+json") {
				t.Errorf("400 Content-Type = %q, want a problem", r.header.Get("Content-Type"))
			}
		})
	}
}

// TestPreferIgnoredElsewhere: a route that does not honour respond-async
// never reads Prefer (a malformed one is no error) and forwards nothing.
func TestPreferIgnoredElsewhere(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.getOrder = func(ctx context.Context, _ *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		if md, _ := metadata.FromIncomingContext(ctx); len(md.Get(prefer.MetadataKey)) != 0 {
			t.Errorf("GetOrder got prefer metadata %q", md.Get(prefer.MetadataKey))
		}
		return &orderv1.Order{Id: "ord-1"}, nil
	}
	if r := h.do("GET", "/api/orders/ord-1", aliceToken, "", `Prefer: "respond-async"`); r.status != 200 {
		t.Fatalf("GET with a malformed Prefer = %d %s, want 200", r.status, r.body)
	}
}
