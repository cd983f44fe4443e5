package gateway

import (
	"fmt"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/gateway/route/selector"
)

// groupRoutes resolves the route selectors of groups (limits.groups or
// shed.groups, named list in errors; part returns a group's name and
// selectors) against routes: the index in groups of each route a group
// selects. A selector that selects no route, or a route two groups
// select, is an error. newLimiter and newShedder build on it, and
// CheckRoutes runs it, so check-config refuses what New refuses.
func groupRoutes[G any](list string, groups []G, part func(G) (string, []string), routes []*route.Route) (map[*route.Route]int, error) {
	out := map[*route.Route]int{}
	for i, g := range groups {
		name, keys := part(g)
		for j, key := range keys {
			selected, err := selector.Resolve(key, routes)
			if err != nil {
				return nil, fmt.Errorf("gateway config: %s[%d].routes[%d]: %q: %w", list, i, j, key, err)
			}
			for _, r := range selected {
				if prev, dup := out[r]; dup && prev != i {
					prevName, _ := part(groups[prev])
					return nil, fmt.Errorf("gateway config: %s: %q and %q both hold %s", list, prevName, name, r.Key())
				}
				out[r] = i
			}
		}
	}
	return out, nil
}

// groupNames is groupRoutes as names: the name of the group that selects
// each route (describe's and /admin/routes' limit and shed group). A
// config groupRoutes refuses names none: New has refused it already.
func groupNames[G any](groups []G, part func(G) (string, []string), routes []*route.Route) map[*route.Route]string {
	idx, _ := groupRoutes("", groups, part, routes)
	out := make(map[*route.Route]string, len(idx))
	for r, i := range idx {
		out[r], _ = part(groups[i])
	}
	return out
}

func limitGroupParts(g config.LimitGroupConfig) (string, []string) { return g.Name, g.Routes }

func shedGroupParts(g config.ShedGroupConfig) (string, []string) { return g.Name, g.Routes }

// checkGroups resolves cfg's limit and shed groups against routes, as
// newLimiter and newShedder do.
func checkGroups(cfg config.Config, routes []*route.Route) error {
	if _, err := groupRoutes("limits.groups", cfg.Limits.Groups, limitGroupParts, routes); err != nil {
		return err
	}
	_, err := groupRoutes("shed.groups", cfg.Shed.Groups, shedGroupParts, routes)
	return err
}
