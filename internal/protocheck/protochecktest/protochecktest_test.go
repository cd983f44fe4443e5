package protochecktest_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/protocheck/protochecktest"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestRequests: every method of the service gets a call, and every string
// field at any depth is filled and listed.
func TestRequests(t *testing.T) {
	calls, err := protochecktest.Requests(inventoryv1.InventoryService_ServiceDesc.ServiceName)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, c := range calls {
		got[c.Method] = c.Fields
	}
	want := map[string][]string{
		"/portico.inventory.v1.InventoryService/GetItem":            {"sku"},
		"/portico.inventory.v1.InventoryService/ListItems":          {"page_token"},
		"/portico.inventory.v1.InventoryService/CreateItem":         {"item.sku", "item.name", "item.unit_price.currency", "item.etag"},
		"/portico.inventory.v1.InventoryService/UpdateItem":         {"item.sku", "item.name", "item.unit_price.currency", "item.etag", "update_mask.paths[0]", "etag"},
		"/portico.inventory.v1.InventoryService/ReserveStock":       {"order_id", "lines[0].sku"},
		"/portico.inventory.v1.InventoryService/GetReservation":     {"id"},
		"/portico.inventory.v1.InventoryService/CommitReservation":  {"id"},
		"/portico.inventory.v1.InventoryService/ReleaseReservation": {"id"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Requests fields (-want +got):\n%s", d)
	}
	for _, c := range calls {
		if c.Resp == nil || c.Req.ProtoReflect().Descriptor().FullName() == c.Resp.ProtoReflect().Descriptor().FullName() {
			t.Errorf("%s: response %v", c.Method, c.Resp)
		}
	}
}

// TestProblems: each way a handler that forgot its checks shows up.
func TestProblems(t *testing.T) {
	big := strings.Repeat("x", protochecktest.Size)
	invalid := func(fields ...string) error {
		var v rpcerr.Violations
		for _, f := range fields {
			v.Add(f, "must be at most 64 characters")
		}
		return v.Err()
	}
	var echo rpcerr.Violations
	echo.Add("item.sku", big+" is too long")
	echo.Add("update_mask", "too long")
	fields := []string{"item.sku", "update_mask.paths[0]"}
	tests := []struct {
		name string
		err  error
		want int // problems
	}{
		{"every field named", invalid("item.sku", "update_mask.paths[0]"), 0},
		{"a mask named whole", invalid("item.sku", "update_mask"), 0},
		{"accepted", nil, 1},
		{"not found", status.Error(codes.NotFound, "no item"), 1},
		{"unimplemented", status.Error(codes.Unimplemented, "no"), 1},
		{"a field not named", invalid("item.sku"), 1},
		{"a sibling is not a parent", invalid("item.sku", "update"), 1},
		{"value echoed", echo.Err(), 1},
		{"value echoed in the message", status.Error(codes.InvalidArgument, big), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := protochecktest.Problems(tt.err, fields); len(got) != tt.want {
				t.Errorf("Problems(%.80v) = %q, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestRequestsUnknownService(t *testing.T) {
	if _, err := protochecktest.Requests("portico.nope.v1.NoService"); err == nil {
		t.Error("Requests(unknown service) = nil error")
	}
}
