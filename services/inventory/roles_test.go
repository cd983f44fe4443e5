package inventory

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// TestReservationRoles: every reservation method checks the caller's role
// before it reads or writes anything. A customer or a reader reserving,
// committing or releasing stock was served, holding or selling stock of
// orders not its own.
func TestReservationRoles(t *testing.T) {
	f := newFixture(t, "", []Item{{SKU: "keyboard-001", Name: "Keyboard", Price: Money{4999, "USD"}, Stock: Stock{Available: 1000}, UpdateTime: t0}})
	write := []string{callmeta.RoleService, callmeta.RoleAdmin}
	tests := []struct {
		method string
		roles  []string // the roles served
		call   func(c context.Context, id, order string) error
	}{
		{"ReserveStock", write, func(c context.Context, _, order string) error {
			_, err := f.client.ReserveStock(c, &inventoryv1.ReserveStockRequest{OrderId: order, Lines: []*inventoryv1.Line{line("keyboard-001", 1)}})
			return err
		}},
		{"GetReservation", []string{callmeta.RoleService, callmeta.RoleAdmin, callmeta.RoleReader}, func(c context.Context, id, _ string) error {
			_, err := f.client.GetReservation(c, &inventoryv1.GetReservationRequest{Id: id})
			return err
		}},
		{"CommitReservation", write, func(c context.Context, id, _ string) error {
			_, err := f.client.CommitReservation(c, &inventoryv1.CommitReservationRequest{Id: id})
			return err
		}},
		{"ReleaseReservation", write, func(c context.Context, id, _ string) error {
			_, err := f.client.ReleaseReservation(c, &inventoryv1.ReleaseReservationRequest{Id: id})
			return err
		}},
	}
	n := 0
	for _, tt := range tests {
		for _, role := range []string{callmeta.RoleService, callmeta.RoleAdmin, callmeta.RoleReader, callmeta.RoleCustomer, "partner"} {
			t.Run(tt.method+"/"+role, func(t *testing.T) {
				n++
				res := f.reserve(t, fmt.Sprintf("setup-%d", n), line("keyboard-001", 1))
				before := f.stock(t, "keyboard-001")
				err := tt.call(as(t, role), res.GetId(), fmt.Sprintf("order-%d", n))
				if slices.Contains(tt.roles, role) {
					if err != nil {
						t.Errorf("%s as %s = %v, want served", tt.method, role, err)
					}
					return
				}
				checkErr(t, tt.method, err, codes.PermissionDenied, reasonAdminRequired)
				if got := f.stock(t, "keyboard-001"); got != before {
					t.Errorf("stock after a refused %s = %+v, want %+v", tt.method, got, before)
				}
			})
		}
	}
}
