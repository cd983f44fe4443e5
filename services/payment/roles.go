package payment

import (
	"context"
	"strings"

	"github.com/portico-gateway/portico/internal/callmeta"
)

// Roles each kind of method is open to (callmeta.RoleIn; see the package
// doc). A payment names no customer, so none is a customer's own.
var (
	moveRoles = []string{callmeta.RoleService, callmeta.RoleAdmin}
	readRoles = []string{callmeta.RoleService, callmeta.RoleAdmin, callmeta.RoleReader}
)

// mayMove refuses a charge or refund by a caller that is neither the
// order service nor an admin (ADMIN_REQUIRED: the edge grants no other role
// these methods).
func (s *Service) mayMove(ctx context.Context) error {
	if callmeta.RoleIn(ctx, moveRoles...) {
		return nil
	}
	return s.toStatus(ctx, errAdminRequired)
}

// mayMoveFor refuses an admin's charge for an order of the order service
// (sagaOrder); what says what only the saga does ("charges").
func (s *Service) mayMoveFor(ctx context.Context, orderID, what string) error {
	if sagaCaller(ctx) || !strings.HasPrefix(orderID, callmeta.OrderIDPrefix) {
		return nil
	}
	return s.toStatus(ctx, sagaOrder(orderID, what))
}

// mayRead refuses a read by a customer or an unknown role.
func (s *Service) mayRead(ctx context.Context) error {
	if callmeta.RoleIn(ctx, readRoles...) {
		return nil
	}
	return s.toStatus(ctx, errCustomerRead)
}

// sagaCaller reports whether the call comes from the order service (role
// service) or from in process without a principal (callmeta.RoleIn).
func sagaCaller(ctx context.Context) bool { return callmeta.RoleIn(ctx, callmeta.RoleService) }
