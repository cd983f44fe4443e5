package payment

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// as returns a call context with a principal of role and an idempotency key.
func as(t *testing.T, role, key string) context.Context {
	return callmeta.WithPrincipal(keyed(t, key), callmeta.Principal{Subject: "someone", Role: role})
}

// TestPaymentRoles: every method checks the caller's role, and an admin
// may not charge or refund an order of the order service by hand. Before,
// any verified role was served: a customer refunded another customer's
// payment while its order stayed CONFIRMED, and a capture could be made
// behind a FAILED order.
func TestPaymentRoles(t *testing.T) {
	f := newFixture(t, "")
	var (
		move = []string{callmeta.RoleService, callmeta.RoleAdmin}
		read = []string{callmeta.RoleService, callmeta.RoleAdmin, callmeta.RoleReader}
		saga = []string{callmeta.RoleService}
	)
	adminRequired := rpcerr.ReasonName(typev1.Reason_REASON_ADMIN_REQUIRED)
	denied := rpcerr.ReasonName(typev1.Reason_REASON_PERMISSION_DENIED)
	tests := []struct {
		method string
		order  string   // the order the payment is for
		roles  []string // the roles served
		reason string   // the refusal of any other role
		call   func(c context.Context, payID, order string) error
	}{
		{"CreatePayment", "manual", move, adminRequired, func(c context.Context, _, order string) error {
			_, err := f.client.CreatePayment(c, charge(order+"-new", 100, MethodCardOK))
			return err
		}},
		{"CreatePayment", callmeta.OrderIDPrefix, saga, "", func(c context.Context, _, order string) error {
			_, err := f.client.CreatePayment(c, charge(order+"-new", 100, MethodCardOK))
			return err
		}},
		{"GetPayment", "manual", read, denied, func(c context.Context, id, _ string) error {
			_, err := f.client.GetPayment(c, &paymentv1.GetPaymentRequest{Id: id})
			return err
		}},
		{"ListPayments", "manual", read, denied, func(c context.Context, _, order string) error {
			_, err := f.client.ListPayments(c, &paymentv1.ListPaymentsRequest{OrderId: order})
			return err
		}},
		{"RefundPayment", "manual", move, adminRequired, func(c context.Context, id, _ string) error {
			_, err := f.client.RefundPayment(c, &paymentv1.RefundPaymentRequest{Id: id})
			return err
		}},
		{"RefundPayment", callmeta.OrderIDPrefix, saga, "", func(c context.Context, id, _ string) error {
			_, err := f.client.RefundPayment(c, &paymentv1.RefundPaymentRequest{Id: id})
			return err
		}},
	}
	n := 0
	for _, tt := range tests {
		for _, role := range []string{callmeta.RoleService, callmeta.RoleAdmin, callmeta.RoleReader, callmeta.RoleCustomer, "partner"} {
			t.Run(fmt.Sprintf("%s/%s/%s", tt.method, tt.order, role), func(t *testing.T) {
				n++
				order := fmt.Sprintf("%s%d", tt.order, n)
				p := f.create(t, fmt.Sprintf("setup-%d", n), charge(order, 100, MethodCardOK))
				err := tt.call(as(t, role, fmt.Sprintf("k-%d", n)), p.GetId(), order)
				if slices.Contains(tt.roles, role) {
					if err != nil {
						t.Errorf("%s as %s = %v, want served", tt.method, role, err)
					}
					return
				}
				want := tt.reason
				if want == "" { // a saga order: an admin is told to cancel it, anyone else needs admin
					want = adminRequired
					if role == callmeta.RoleAdmin {
						want = denied
					}
				}
				checkErr(t, tt.method, err, codes.PermissionDenied, want)
				got := f.list(t, order)
				if len(got) != 1 || got[0].GetStatus() != paymentv1.Payment_STATUS_CAPTURED {
					t.Errorf("payments of %s after a refused %s = %v, want the one CAPTURED", order, tt.method, got)
				}
				if l := f.list(t, order+"-new"); len(l) != 0 {
					t.Errorf("payments of %s-new after a refused %s = %v, want none", order, tt.method, l)
				}
			})
		}
	}
}
