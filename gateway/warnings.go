package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/route"
)

// Warnings returns what `portico check-config` prints and the edge logs
// at startup without refusing the config: plaintext secrets outside the
// dev profile, a JWK Set fetched over plain http from another host, and
// generated routes no policy rule covers, and the compiled-in services
// the config has no upstream for (their routes answer 404).
func Warnings(c config.Config) []string {
	c, err := withServices(context.Background(), c)
	if err != nil {
		return nil
	}
	table, _, err := buildRoutes(c, registrations)
	if err != nil {
		return nil
	}
	out := append(c.AuthWarnings(table.Routes()), unservedWarnings(c, registrations)...)
	return append(out, adminOnlyWarnings(c, table.Routes())...)
}

// adminOnlyWarnings names each loaded service whose routes the built-in
// policy (no auth.policy) grants admin only: it grants the other roles
// the built-in services' RPCs, so a service added at run time answers 403
// to every caller but admin until auth.policy grants it. Deliberate (an
// order reader must not read shipments by inheriting a path prefix), but
// a surprise to the team that added the service, hence the warning.
func adminOnlyWarnings(c config.Config, routes []*route.Route) []string {
	if len(c.Auth.Policy) > 0 {
		return nil
	}
	pol := auth.DefaultPolicy(routes)
	var out []string
	for _, up := range c.Upstreams {
		if !up.Dynamic() {
			continue
		}
		for _, svc := range up.Services {
			n, adminOnly := 0, true
			for _, r := range routes {
				if r.Upstream == up.Name && strings.HasPrefix(r.RPC, "/"+svc+"/") {
					n++
					adminOnly = adminOnly && slices.Equal(pol.Roles(r), []string{auth.RoleAdmin})
				}
			}
			if n > 0 && adminOnly {
				out = append(out, fmt.Sprintf("auth.policy: none, so the built-in policy grants the %d routes of %s (upstream %s) to admin only; "+
					"to let other roles call them, set auth.policy: the built-in rules (docs/security.md) plus rules for %s/...", n, svc, up.Name, svc))
			}
		}
	}
	return out
}

// unservedWarnings names each compiled-in service without its upstream.
func unservedWarnings(c config.Config, regs []registration) []string {
	var out []string
	for _, reg := range unserved(c, regs) {
		out = append(out, fmt.Sprintf("upstreams: %s is not served (no upstream named %q): its routes answer 404", reg.service, reg.upstream))
	}
	return out
}

// CheckRoutes is the config.Check of the edge: what New would refuse when
// it builds from the route table (routes.overrides, the policy, the limit
// and shed groups' selectors) from c, with the run-time
// services' descriptors loaded (kept in c, so New does not load them
// again). Pass it to config.Load and config.Parse; New and Reload run it
// too (config.Config.Check).
func CheckRoutes(c config.Config) (config.Config, error) {
	return routeCheck(context.Background(), registrations)(c)
}

// routeCheck is CheckRoutes against regs, with ctx bounding the loading of
// run-time services (server reflection): New's and Reload's.
func routeCheck(ctx context.Context, regs []registration) config.Check {
	return func(c config.Config) (config.Config, error) { return checkRoutesOf(ctx, c, regs) }
}

func checkRoutesOf(ctx context.Context, c config.Config, regs []registration) (config.Config, error) {
	c, err := withServices(ctx, c)
	if err != nil {
		return c, err
	}
	table, _, err := buildRoutes(c, regs)
	if err != nil {
		return c, err
	}
	if _, err = buildPolicy(c, table); err != nil {
		return c, err
	}
	return c, checkGroups(c, table.Routes())
}
