package order

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/resourcetag"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestCancelOrderEtag: a cancel with an etag (field or if-match metadata)
// goes ahead only while the etag is current, on both store backends; once
// the order is CANCELLED, any etag gets the cancelled order back (RFC 9110
// section 13.1.1: the change was applied), so a retried cancel succeeds.
func TestCancelOrderEtag(t *testing.T) {
	tests := []struct {
		name        string
		field, meta string // "current" is the order's etag
		wantCode    codes.Code
		wantStatus  orderv1.Order_Status
		wantRefunds int
	}{
		{name: "stale field", field: "stale", wantCode: codes.FailedPrecondition, wantStatus: orderv1.Order_STATUS_CONFIRMED},
		{name: "stale metadata", meta: "stale", wantCode: codes.FailedPrecondition, wantStatus: orderv1.Order_STATUS_CONFIRMED},
		{name: "current field", field: "current", wantStatus: orderv1.Order_STATUS_CANCELLED, wantRefunds: 1},
		{name: "current metadata", meta: "current", wantStatus: orderv1.Order_STATUS_CANCELLED, wantRefunds: 1},
	}
	backends(t, func(t *testing.T, db string) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h := newHarnessDB(t, db)
				o, err := h.client.CreateOrder(alice(t, "k-"+tt.name), orderReq("pm_card_ok", "keyboard-001", 1))
				if err != nil {
					t.Fatalf("CreateOrder: %v", err)
				}
				read, err := h.client.GetOrder(alice(t, ""), &orderv1.GetOrderRequest{Id: o.GetId()})
				if err != nil || read.GetEtag() == "" || read.GetEtag() != o.GetEtag() {
					t.Fatalf("GetOrder etag = %q (%v), CreateOrder's %q: want the same, set", read.GetEtag(), err, o.GetEtag())
				}
				if want := resourcetag.Set(proto.Clone(read).(*orderv1.Order)).GetEtag(); read.GetEtag() != want {
					t.Fatalf("GetOrder etag = %q, want the hash of the order %q", read.GetEtag(), want)
				}
				pick := map[string]string{"current": read.GetEtag(), "stale": "stale", "": ""}
				ctx := alice(t, "")
				if tt.meta != "" {
					ctx = metadata.AppendToOutgoingContext(ctx, callmeta.IfMatchKey, pick[tt.meta])
				}
				got, err := h.client.CancelOrder(ctx, &orderv1.CancelOrderRequest{Id: o.GetId(), Etag: pick[tt.field]})
				if status.Code(err) != tt.wantCode {
					t.Fatalf("CancelOrder = %v, want %v", err, tt.wantCode)
				}
				if err != nil {
					if rpcerr.Reason(err) != "ETAG_MISMATCH" || rpcerr.ErrorInfo(err).GetMetadata()["etag"] != read.GetEtag() {
						t.Errorf("CancelOrder error = %v, want ETAG_MISMATCH with the current etag", err)
					}
				} else if got.GetEtag() == read.GetEtag() {
					t.Errorf("cancelled order kept etag %q", got.GetEtag())
				}
				checkStored(t, h, h.get(o.GetId()), tt.wantStatus, "", inventoryv1.Reservation_STATE_COMMITTED, 1, tt.wantRefunds)
				if err != nil {
					return
				}
				// Retried with the tag it was read with: applied already.
				again, err := h.client.CancelOrder(alice(t, ""), &orderv1.CancelOrderRequest{Id: o.GetId(), Etag: read.GetEtag()})
				if err != nil || again.GetStatus() != orderv1.Order_STATUS_CANCELLED {
					t.Errorf("CancelOrder again with the old etag = %v, %v; want the CANCELLED order", again.GetStatus(), err)
				}
			})
		}
	})
}
