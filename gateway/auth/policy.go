package auth

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/gateway/route/selector"
)

// Rule grants roles the routes its selectors name.
type Rule struct {
	// Roles are the roles granted; at least one.
	Roles []string
	// Allow selects routes, each a gateway/route/selector selector
	// ("*", "GET /api/orders/**", "pkg.Service/*", ...), except that HEAD
	// is refused: a GET route serves HEAD too. A selector that selects no
	// route is an error.
	Allow []string
}

// The built-in services, whose RPCs DefaultRules name.
const (
	inventoryService = "portico.inventory.v1.InventoryService"
	paymentService   = "portico.payment.v1.PaymentService"
	orderService     = "portico.order.v1.OrderService"
)

// DefaultRules are the policy of a config without auth.policy, today's
// built-in roles:
//
//	admin     every route, a loaded service's too
//	reader    every GET route of the built-in services (and HEAD)
//	customer  read the catalogue (GetItem, ListItems); every order RPC
//	          (create, get, list, watch, export, cancel), the order
//	          service checking that the order is theirs
//	other     nothing
//
// The grants other than admin's name the built-in services' RPCs, not
// path prefixes: a route of a service loaded at run time
// (upstreams[].services) is granted to admin only, whatever its path
// (GET /api/orders/{order_id}/shipment is no order RPC, and the order
// service's ownership check does not guard it), until auth.policy grants
// it. docs/security.md shows these rules as YAML (TestDefaultRulesDoc).
func DefaultRules() []Rule {
	return []Rule{
		{Roles: []string{RoleAdmin}, Allow: []string{"*"}},
		{Roles: []string{RoleReader}, Allow: []string{
			"GET " + inventoryService + "/*", "GET " + paymentService + "/*", "GET " + orderService + "/*",
		}},
		{Roles: []string{RoleCustomer}, Allow: []string{
			inventoryService + "/GetItem", inventoryService + "/ListItems",
			orderService + "/CreateOrder", orderService + "/GetOrder", orderService + "/ListOrders",
			orderService + "/WatchOrder", orderService + "/ExportOrders", orderService + "/CancelOrder",
		}},
	}
}

// Policy is the coarse authorization of the edge: which roles may call
// which route. It looks only at the principal's roles and the route,
// never at resource data; per-resource decisions (may alice read
// ord-0001?) stay in the services. A route no rule covers is denied to
// everyone. Safe for concurrent use (read-only after NewPolicy).
type Policy struct {
	roles map[*route.Route][]string
	all   []*route.Route
}

// NewPolicy resolves rules against routes; a selector that selects no
// route is an error. Its error joins one *RuleError per fault.
func NewPolicy(rules []Rule, routes []*route.Route) (*Policy, error) {
	return newPolicy(rules, routes, true)
}

// DefaultPolicy is the policy of DefaultRules over routes (which need not
// include every route the rules name).
func DefaultPolicy(routes []*route.Route) *Policy {
	p, _ := newPolicy(DefaultRules(), routes, false)
	return p
}

func newPolicy(rules []Rule, routes []*route.Route, strict bool) (*Policy, error) {
	p := &Policy{roles: map[*route.Route][]string{}, all: routes}
	var errs []error
	for i, r := range rules {
		if len(r.Roles) == 0 {
			errs = append(errs, ruleErr(i, "roles", errors.New("at least one role is required")))
		}
		for j, role := range r.Roles {
			if !ValidRole(role) {
				errs = append(errs, ruleErr(i, fmt.Sprintf("roles[%d]", j), fmt.Errorf("role %q: want 1-32 of [a-z0-9_-] starting with a letter", role)))
			} else if role == RoleService {
				errs = append(errs, ruleErr(i, fmt.Sprintf("roles[%d]", j), errReservedRole))
			}
		}
		if len(r.Allow) == 0 {
			errs = append(errs, ruleErr(i, "allow", errors.New("at least one selector is required")))
		}
		for j, text := range r.Allow {
			sel, err := ParseAllow(text)
			if err != nil {
				errs = append(errs, ruleErr(i, fmt.Sprintf("allow[%d]", j), fmt.Errorf("%q: %w", text, err)))
				continue
			}
			selected := sel.Select(routes)
			if len(selected) == 0 && strict {
				errs = append(errs, ruleErr(i, fmt.Sprintf("allow[%d]", j), fmt.Errorf("%q: %w", text, selector.ErrNoRoute)))
			}
			for _, rt := range selected {
				for _, role := range r.Roles {
					if !slices.Contains(p.roles[rt], role) {
						p.roles[rt] = append(p.roles[rt], role)
					}
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, rs := range p.roles {
		slices.Sort(rs)
	}
	return p, nil
}

// RuleError is a fault of one rule given to NewPolicy. Its text names
// the field as a config path below the policy list, "policy[0].allow[1]:
// ...", so the config (auth.policy) reads it as its other sections' errors.
type RuleError struct {
	Rule  int    // the rule's index
	Field string // "roles", "roles[1]", "allow" or "allow[0]"
	Err   error
}

func ruleErr(rule int, field string, err error) error {
	return &RuleError{Rule: rule, Field: field, Err: err}
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("policy[%d].%s: %v", e.Rule, e.Field, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// Allowed reports whether p may call rt.
func (pol *Policy) Allowed(p Principal, rt *route.Route) bool {
	for _, role := range pol.roles[rt] {
		if p.HasRole(role) {
			return true
		}
	}
	return false
}

// Grant returns p as it calls rt: its Role becomes the first of its roles
// (Role, then Roles in order) that the policy grants for rt, so a caller
// holding [reader admin] updates an item as admin, which the service checks
// too (it receives one role). p is unchanged when no role is granted.
func (pol *Policy) Grant(p Principal, rt *route.Route) Principal {
	allowed := pol.roles[rt]
	if p.Role != "" && slices.Contains(allowed, p.Role) {
		return p
	}
	for _, role := range p.Roles {
		if role != "" && slices.Contains(allowed, role) {
			p.Role = role
			return p
		}
	}
	return p
}

// Roles returns the roles that may call rt, sorted.
func (pol *Policy) Roles(rt *route.Route) []string { return slices.Clone(pol.roles[rt]) }

// Uncovered returns the routes no rule covers (denied to everyone).
func (pol *Policy) Uncovered() []*route.Route {
	var out []*route.Route
	for _, rt := range pol.all {
		if len(pol.roles[rt]) == 0 {
			out = append(out, rt)
		}
	}
	return out
}

// Named reports whether some rule grants role.
func (pol *Policy) Named(role string) bool {
	for _, rs := range pol.roles {
		if slices.Contains(rs, role) {
			return true
		}
	}
	return false
}

// ParseAllow parses one Rule.Allow selector. A rule cannot grant HEAD
// without GET, so HEAD is refused rather than read as GET.
func ParseAllow(text string) (selector.Selector, error) {
	sel, err := selector.Parse(text)
	if err == nil && sel.Method() == http.MethodHead {
		return selector.Selector{}, errors.New(`method "HEAD": write GET; a GET route serves HEAD too`)
	}
	return sel, err
}
