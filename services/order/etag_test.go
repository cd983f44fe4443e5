package order

import (
	"errors"
	"io"
	"testing"
	"time"

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

// getEtag is GetOrder's etag for id, as alice reads it; it must be set.
func getEtag(t *testing.T, h *harness, id string) string {
	t.Helper()
	read, err := h.client.GetOrder(alice(t, ""), &orderv1.GetOrderRequest{Id: id})
	if err != nil || read.GetEtag() == "" {
		t.Fatalf("GetOrder(%s) etag = %q, %v; want set", id, read.GetEtag(), err)
	}
	return read.GetEtag()
}

// TestAnswersCarryEtag: every answer that returns an order carries the
// etag GetOrder gives the same stored order: the 202 of an order accepted
// for later, the cancel of an accepted order, and every WatchOrder message.
func TestAnswersCarryEtag(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		h := newHarnessDB(t, db, WithWatchPoll(20*time.Millisecond))
		killInventory(h)
		o, _, err := createAsync(t, h, "k1", "keyboard-001", 1)
		if err != nil || o.GetStatus() != orderv1.Order_STATUS_ACCEPTED {
			t.Fatalf("CreateOrder = %v, %v; want ACCEPTED", o.GetStatus(), err)
		}
		if want := getEtag(t, h, o.GetId()); o.GetEtag() != want {
			t.Errorf("accepted answer etag = %q, GetOrder's %q", o.GetEtag(), want)
		}

		stream, err := h.client.WatchOrder(alice(t, ""), &orderv1.WatchOrderRequest{Id: o.GetId()})
		if err != nil {
			t.Fatalf("WatchOrder: %v", err)
		}
		first, err := stream.Recv()
		if err != nil {
			t.Fatalf("first Recv: %v", err)
		}
		if want := getEtag(t, h, o.GetId()); first.GetEtag() != want {
			t.Errorf("first watch message etag = %q, GetOrder's %q", first.GetEtag(), want)
		}

		c, err := h.client.CancelOrder(alice(t, ""), &orderv1.CancelOrderRequest{Id: o.GetId()})
		if err != nil || c.GetStatus() != orderv1.Order_STATUS_CANCELLED {
			t.Fatalf("CancelOrder = %v, %v; want CANCELLED", c.GetStatus(), err)
		}
		want := getEtag(t, h, o.GetId())
		if c.GetEtag() != want {
			t.Errorf("cancel of an accepted order: etag = %q, GetOrder's %q", c.GetEtag(), want)
		}
		next, err := stream.Recv()
		if err != nil || next.GetStatus() != orderv1.Order_STATUS_CANCELLED {
			t.Fatalf("second Recv = %v, %v; want CANCELLED", next.GetStatus(), err)
		}
		if next.GetEtag() != want {
			t.Errorf("watch message after cancel: etag = %q, GetOrder's %q", next.GetEtag(), want)
		}
		if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
			t.Errorf("Recv after a final state = %v, want io.EOF", err)
		}
	})
}
