package inventory

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/metadata"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Request limits, from the proto contract.
const (
	maxSKULen     = 64
	maxNameLen    = 200
	maxIDLen      = 64
	maxLines      = 50
	maxQuantity   = 1000
	defaultPage   = 50
	maxPage       = 100
	maskName      = "name"
	maskUnitPrice = "unit_price"
	maskAvailable = "available"
)

// Value limits. They keep every sum the order saga makes far from int64
// overflow: 1000 units × 50 lines × MaxUnitPriceMinor is 5e16.
const (
	// MaxUnitPriceMinor caps Item.unit_price.amount_minor: 1e12 minor units,
	// 10 billion in major units of a two-decimal currency (USD 10,000,000,000.00).
	MaxUnitPriceMinor = 1_000_000_000_000
	// MaxAvailable caps the available stock an admin may set: one billion
	// units.
	MaxAvailable = 1_000_000_000
)

var (
	skuPattern = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)
	// idPattern is the id alphabet of reservation ids and order ids: the
	// URL-safe characters our ids use ("res-<hex>", "ord-<hex>"), so an id
	// is safe to put into a message, a log line or a URL as it is.
	idPattern       = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
	settablePaths   = []string{maskName, maskUnitPrice, maskAvailable}
)

// checkID requires 1-64 characters of the id alphabet. An id is checked
// before it is looked up, so a NOT_FOUND never echoes more than 64 safe
// characters.
func checkID(v *rpcerr.Violations, field, id string) {
	if !idPattern.MatchString(id) {
		v.Add(field, fmt.Sprintf("must be 1-%d characters of [A-Za-z0-9_-]", maxIDLen))
	}
}

func checkSKU(v *rpcerr.Violations, field, sku string) {
	if !skuPattern.MatchString(sku) {
		v.Add(field, fmt.Sprintf("must be 1-%d characters of [a-z0-9-]", maxSKULen))
	}
}

// checkText requires 1-max characters (not bytes).
func checkText(v *rpcerr.Violations, field, s string, max int) {
	if n := utf8.RuneCountInString(s); n == 0 || n > max {
		v.Add(field, fmt.Sprintf("must be 1-%d characters", max))
	}
}

func checkPrice(v *rpcerr.Violations, field string, m *typev1.Money) {
	if m == nil {
		v.Add(field, "is required")
		return
	}
	switch a := m.GetAmountMinor(); {
	case a < 0:
		v.Add(field+".amount_minor", "must not be negative")
	case a > MaxUnitPriceMinor:
		v.Add(field+".amount_minor", fmt.Sprintf("must be at most %d (10 billion in major units)", int64(MaxUnitPriceMinor)))
	}
	if !currencyPattern.MatchString(m.GetCurrency()) {
		v.Add(field+".currency", "must be 3 upper-case letters (ISO 4217)")
	}
}

// checkItem validates the fields of it named in paths.
func checkItem(v *rpcerr.Violations, it *inventoryv1.Item, paths []string) {
	checkSKU(v, "item.sku", it.GetSku())
	if slices.Contains(paths, maskName) {
		checkText(v, "item.name", it.GetName(), maxNameLen)
	}
	if slices.Contains(paths, maskUnitPrice) {
		checkPrice(v, "item.unit_price", it.GetUnitPrice())
	}
	if slices.Contains(paths, maskAvailable) {
		switch a := it.GetAvailable(); {
		case a < 0:
			v.Add("item.available", "must not be negative")
		case a > MaxAvailable:
			v.Add("item.available", fmt.Sprintf("must be at most %d", MaxAvailable))
		}
	}
}

func validateCreate(req *inventoryv1.CreateItemRequest) error {
	var v rpcerr.Violations
	if req.GetItem() == nil {
		v.Add("item", "is required")
		return v.Err()
	}
	checkItem(&v, req.GetItem(), settablePaths)
	return v.Err()
}

// validateUpdate returns the fields to update: the mask's paths, or every
// settable field when the mask is empty.
func validateUpdate(req *inventoryv1.UpdateItemRequest) ([]string, error) {
	var v rpcerr.Violations
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
	if req.GetItem() == nil {
		v.Add("item", "is required")
	} else {
		checkItem(&v, req.GetItem(), paths)
	}
	return paths, v.Err()
}

// pageSize validates ListItems' page_size and applies its default and cap.
func pageSize(v *rpcerr.Violations, n int32) int {
	switch {
	case n < 0:
		v.Add("page_size", "must not be negative")
	case n == 0:
		return defaultPage
	case n > maxPage:
		return maxPage
	}
	return int(n)
}

func validateReserve(req *inventoryv1.ReserveStockRequest) error {
	var v rpcerr.Violations
	checkID(&v, "order_id", req.GetOrderId())
	if n := len(req.GetLines()); n == 0 || n > maxLines {
		v.Add("lines", fmt.Sprintf("must hold 1-%d lines", maxLines))
	}
	first := map[string]int{}
	for i, l := range req.GetLines() {
		f := fmt.Sprintf("lines[%d]", i)
		checkSKU(&v, f+".sku", l.GetSku())
		if j, dup := first[l.GetSku()]; dup {
			v.Add(f+".sku", fmt.Sprintf("repeats lines[%d].sku; name each SKU once", j))
		} else {
			first[l.GetSku()] = i
		}
		if q := l.GetQuantity(); q < 1 || q > maxQuantity {
			v.Add(f+".quantity", fmt.Sprintf("must be 1-%d", maxQuantity))
		}
	}
	return v.Err()
}

// validateID checks a reservation id; a well-formed unknown id is NOT_FOUND.
func validateID(id string) error {
	var v rpcerr.Violations
	checkID(&v, "id", id)
	return v.Err()
}

// requireAdmin refuses a call that carries principal metadata without the
// admin role. A call with none is internal (service to service) and allowed:
// the edge always sets the principal on calls it forwards.
func requireAdmin(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	roles, subjects := md.Get(callmeta.RoleKey), md.Get(callmeta.SubjectKey)
	if len(roles) == 0 && len(subjects) == 0 {
		return nil
	}
	if p, _ := callmeta.PrincipalFromIncoming(ctx); p.Role == callmeta.RoleAdmin {
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
