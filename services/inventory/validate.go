package inventory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/protocheck"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Request limits the proto's rules cannot state; the others (lengths,
// alphabets, list sizes, quantities) are buf.validate rules in
// inventory.proto, enforced by protocheck.
const (
	defaultPage   = 50  // ListItems' page_size when it is 0
	maxPage       = 100 // ListItems' largest page_size
	maskName      = "name"
	maskUnitPrice = "unit_price"
	maskAvailable = "available"
)

// Value limits, declared in inventory.proto's rules and repeated here for
// the code that needs them as numbers. They keep every sum the order saga
// makes far from int64 overflow: 1000 units × 50 lines × MaxUnitPriceMinor
// is 5e16.
const (
	// MaxUnitPriceMinor caps Item.unit_price.amount_minor: 1e12 minor units,
	// 10 billion in major units of a two-decimal currency (USD 10,000,000,000.00).
	MaxUnitPriceMinor = 1_000_000_000_000
	// MaxAvailable caps the available stock an admin may set: one billion
	// units.
	MaxAvailable = 1_000_000_000
)

var settablePaths = []string{maskName, maskUnitPrice, maskAvailable}

func validateCreate(req *inventoryv1.CreateItemRequest) error {
	var v rpcerr.Violations
	if err := protocheck.Check(&v, req); err != nil {
		return err
	}
	return v.Err()
}

// validateUpdate returns the fields to update: the mask's paths, or every
// settable field when the mask is empty. A path is echoed in a violation
// only once the mask's rules have bounded it.
func validateUpdate(req *inventoryv1.UpdateItemRequest) ([]string, error) {
	var v rpcerr.Violations
	if err := protocheck.Check(&v, req); err != nil {
		return nil, err
	}
	if v.Has("update_mask") {
		// Too many or too long paths: each would be a violation of its own,
		// repeating what may be megabytes; the rule's one answer is enough.
		// Without a usable mask the item is judged whole.
		return nil, v.Err()
	}
	var paths []string
	leaves := map[string]bool{}
	for i, p := range req.GetUpdateMask().GetPaths() {
		// A price is set whole. grpc-gateway derives a PATCH's mask from the
		// body's leaves (unit_price.amount_minor, unit_price.currency), and a
		// REST client may name it by its JSON name (?updateMask=unitPrice).
		if leaf, ok := priceLeaf(p); ok {
			if leaf != "amount_minor" && leaf != "currency" {
				v.Add(fmt.Sprintf("update_mask.paths[%d]", i), fmt.Sprintf("%q is not a field of unit_price", p))
			}
			leaves[leaf] = true
			continue
		}
		if p == "unitPrice" {
			p = "unit_price"
		}
		if !slices.Contains(settablePaths, p) {
			v.Add(fmt.Sprintf("update_mask.paths[%d]", i), fmt.Sprintf("%q is not settable; use name, unit_price or available", p))
		} else if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	if len(leaves) > 0 {
		if !leaves["amount_minor"] || !leaves["currency"] {
			v.Add("update_mask", "a price is set whole: send both unitPrice.amountMinor and unitPrice.currency")
		} else if !slices.Contains(paths, "unit_price") {
			paths = append(paths, "unit_price")
		}
	}
	if len(req.GetUpdateMask().GetPaths()) == 0 {
		paths = settablePaths
	}
	v = unmasked(v, paths)
	return paths, v.Err()
}

// unmasked drops the violations of settable item fields that paths does not
// name: an update ignores those fields, so it does not judge them either.
func unmasked(v rpcerr.Violations, paths []string) rpcerr.Violations {
	return slices.DeleteFunc(v, func(x rpcerr.Violation) bool {
		f, ok := strings.CutPrefix(x.Field, "item.")
		if !ok {
			return false
		}
		f, _, _ = strings.Cut(f, ".")
		return slices.Contains(settablePaths, f) && !slices.Contains(paths, f)
	})
}

// Roles each kind of method is open to (callmeta.RoleIn). Reservations are
// the order service's saga steps; an admin may also make and settle them by
// hand (the README's manual reservations), a reader may look. A customer
// does none of these: a reservation names no customer, so none is its own.
var (
	adminRoles       = []string{callmeta.RoleAdmin}
	reserveRoles     = []string{callmeta.RoleService, callmeta.RoleAdmin}
	reservationRoles = []string{callmeta.RoleService, callmeta.RoleAdmin, callmeta.RoleReader}
)

// requireAdmin refuses a call whose principal is not an admin; see
// callmeta.RoleIn for a call without one.
func requireAdmin(ctx context.Context) error { return requireRole(ctx, adminRoles) }

// requireRole refuses (ADMIN_REQUIRED: the edge grants no other role
// these methods) a call whose role is not one of roles.
func requireRole(ctx context.Context, roles []string) error {
	if callmeta.RoleIn(ctx, roles...) {
		return nil
	}
	return errAdminRequired
}

// priceLeaf returns the leaf of a unit_price.<leaf> (or unitPrice.<leaf>)
// mask path, with a JSON leaf name mapped to its proto name.
func priceLeaf(path string) (string, bool) {
	for _, prefix := range []string{"unit_price.", "unitPrice."} {
		if leaf, ok := strings.CutPrefix(path, prefix); ok {
			if leaf == "amountMinor" {
				leaf = "amount_minor"
			}
			return leaf, true
		}
	}
	return "", false
}
