package inventory

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func TestReserveStockValidation(t *testing.T) {
	f := newFixture(t, "", testItems())
	fifty := make([]*inventoryv1.Line, 51)
	for i := range fifty {
		fifty[i] = line(strings.Repeat("a", i+1), 1)
	}
	tests := []struct {
		name       string
		req        *inventoryv1.ReserveStockRequest
		wantFields []string
	}{
		{"no order id", &inventoryv1.ReserveStockRequest{Lines: []*inventoryv1.Line{line("keyboard-001", 1)}}, []string{"order_id"}},
		{"order id too long", &inventoryv1.ReserveStockRequest{OrderId: strings.Repeat("o", 65), Lines: []*inventoryv1.Line{line("keyboard-001", 1)}}, []string{"order_id"}},
		{"order id outside the id alphabet", &inventoryv1.ReserveStockRequest{OrderId: "o 1/<x>", Lines: []*inventoryv1.Line{line("keyboard-001", 1)}}, []string{"order_id"}},
		{"no lines", &inventoryv1.ReserveStockRequest{OrderId: "o1"}, []string{"lines"}},
		{"51 lines", &inventoryv1.ReserveStockRequest{OrderId: "o1", Lines: fifty}, []string{"lines"}},
		{"bad sku", &inventoryv1.ReserveStockRequest{OrderId: "o1", Lines: []*inventoryv1.Line{line("Bad SKU", 1)}}, []string{"lines[0].sku"}},
		{"zero quantity", &inventoryv1.ReserveStockRequest{OrderId: "o1", Lines: []*inventoryv1.Line{line("keyboard-001", 0)}}, []string{"lines[0].quantity"}},
		{"quantity 1001", &inventoryv1.ReserveStockRequest{OrderId: "o1", Lines: []*inventoryv1.Line{line("keyboard-001", 1001)}}, []string{"lines[0].quantity"}},
		{"repeated sku", &inventoryv1.ReserveStockRequest{OrderId: "o1", Lines: []*inventoryv1.Line{
			line("keyboard-001", 1), line("mouse-001", 1), line("keyboard-001", 2)}}, []string{"lines"}},
		{"every field bad", &inventoryv1.ReserveStockRequest{Lines: []*inventoryv1.Line{line("", -1), line("mouse-001", 2000)}},
			[]string{"order_id", "lines[0].sku", "lines[0].quantity", "lines[1].quantity"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.client.ReserveStock(ctx(t), tt.req)
			checkErr(t, "ReserveStock", err, codes.InvalidArgument, "")
			if d := cmp.Diff(tt.wantFields, badFields(err)); d != "" {
				t.Errorf("ReserveStock bad fields (-want +got):\n%s", d)
			}
		})
	}
	if got := f.stock(t, "keyboard-001"); got != (Stock{Available: 10}) {
		t.Errorf("keyboard stock after invalid requests = %+v, want untouched", got)
	}
}

func TestReserveStock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, "", testItems())
		got := f.reserve(t, "order-1", line("mouse-001", 2), line("keyboard-001", 3))
		want := &inventoryv1.Reservation{
			OrderId: "order-1",
			Lines: []*inventoryv1.ReservedLine{
				{Sku: "mouse-001", Quantity: 2, UnitPrice: usd(2499)},
				{Sku: "keyboard-001", Quantity: 3, UnitPrice: usd(4999)},
			},
			State:      inventoryv1.Reservation_STATE_ACTIVE,
			ExpireTime: timestamppb.New(t0.Add(testTTL)),
			CreateTime: timestamppb.New(t0),
			UpdateTime: timestamppb.New(t0),
		}
		if d := cmp.Diff(want, got, protocmp.Transform(), protocmp.IgnoreFields(&inventoryv1.Reservation{}, "id")); d != "" {
			t.Errorf("ReserveStock (-want +got):\n%s", d)
		}
		if !strings.HasPrefix(got.GetId(), "res-") {
			t.Errorf("reservation id = %q, want res-...", got.GetId())
		}
		if s := f.stock(t, "keyboard-001"); s != (Stock{Available: 7, Reserved: 3}) {
			t.Errorf("keyboard stock = %+v, want 7 available, 3 reserved", s)
		}
		stored, err := f.client.GetReservation(ctx(t), &inventoryv1.GetReservationRequest{Id: got.GetId()})
		if d := cmp.Diff(got, stored, protocmp.Transform()); err != nil || d != "" {
			t.Errorf("GetReservation = %v (-reserved +stored):\n%s", err, d)
		}
	})
}

func TestReserveStockFailures(t *testing.T) {
	tests := []struct {
		name       string
		lines      []*inventoryv1.Line
		wantCode   codes.Code
		wantReason string
		wantMeta   map[string]string
	}{
		{"unknown sku", []*inventoryv1.Line{line("keyboard-001", 1), line("nope-001", 1)},
			codes.NotFound, reasonItemNotFound, map[string]string{"sku": "nope-001"}},
		{"not enough stock", []*inventoryv1.Line{line("keyboard-001", 11)},
			codes.FailedPrecondition, reasonInsufficientStock, map[string]string{"sku": "keyboard-001", "requested": "11", "available": "10"}},
		{"second line lacks stock", []*inventoryv1.Line{line("keyboard-001", 10), line("mouse-001", 6)},
			codes.FailedPrecondition, reasonInsufficientStock, map[string]string{"sku": "mouse-001", "requested": "6", "available": "5"}},
		{"sold out", []*inventoryv1.Line{line("mouse-001", 1), line("gone-001", 1)},
			codes.FailedPrecondition, reasonInsufficientStock, map[string]string{"sku": "gone-001", "requested": "1", "available": "0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "", testItems())
			_, err := f.client.ReserveStock(ctx(t), &inventoryv1.ReserveStockRequest{OrderId: "order-1", Lines: tt.lines})
			checkErr(t, "ReserveStock", err, tt.wantCode, tt.wantReason)
			if d := cmp.Diff(tt.wantMeta, rpcerr.ErrorInfo(err).GetMetadata()); d != "" {
				t.Errorf("ErrorInfo metadata (-want +got):\n%s", d)
			}
			// All or nothing: no stock moved, and the order has no reservation.
			for _, it := range testItems() {
				if got := f.stock(t, it.SKU); got != it.Stock {
					t.Errorf("%s stock = %+v, want untouched %+v", it.SKU, got, it.Stock)
				}
			}
			r := f.reserve(t, "order-1", line("keyboard-001", 1))
			if len(r.GetLines()) != 1 {
				t.Errorf("reservation after failure = %v, want a fresh one", r)
			}
		})
	}
}

func TestReserveStockIdempotent(t *testing.T) {
	f := newFixture(t, "", testItems())
	first := f.reserve(t, "order-1", line("keyboard-001", 2), line("mouse-001", 1))
	again := f.reserve(t, "order-1", line("mouse-001", 1), line("keyboard-001", 2)) // lines in another order
	if d := cmp.Diff(first, again, protocmp.Transform()); d != "" {
		t.Errorf("repeated ReserveStock (-first +repeat):\n%s", d)
	}
	if s := f.stock(t, "keyboard-001"); s != (Stock{Available: 8, Reserved: 2}) {
		t.Errorf("keyboard stock after repeat = %+v, want reserved once", s)
	}
	tests := []struct {
		name  string
		lines []*inventoryv1.Line
	}{
		{"other quantity", []*inventoryv1.Line{line("keyboard-001", 3), line("mouse-001", 1)}},
		{"fewer lines", []*inventoryv1.Line{line("keyboard-001", 2)}},
		{"more lines", []*inventoryv1.Line{line("keyboard-001", 2), line("mouse-001", 1), line("gone-001", 1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.client.ReserveStock(ctx(t), &inventoryv1.ReserveStockRequest{OrderId: "order-1", Lines: tt.lines})
			checkErr(t, "ReserveStock", err, codes.FailedPrecondition, reasonIdempotencyKeyReused)
		})
	}
	if _, err := f.client.CommitReservation(ctx(t), &inventoryv1.CommitReservationRequest{Id: first.GetId()}); err != nil {
		t.Fatalf("CommitReservation: %v", err)
	}
	afterCommit := f.reserve(t, "order-1", line("keyboard-001", 2), line("mouse-001", 1))
	if afterCommit.GetId() != first.GetId() || afterCommit.GetState() != inventoryv1.Reservation_STATE_COMMITTED {
		t.Errorf("ReserveStock after commit = %v, want %s COMMITTED", afterCommit, first.GetId())
	}
	if s := f.stock(t, "keyboard-001"); s != (Stock{Available: 8, Sold: 2}) {
		t.Errorf("keyboard stock = %+v, want 8 available, 2 sold", s)
	}
}
