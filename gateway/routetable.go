package gateway

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/portico-gateway/portico/gateway/config"
)

// RouteTable is the route table a config file makes the edge serve:
// what `portico describe` prints, the same rows as the admin API's
// /admin/routes on an edge running that file.
type RouteTable struct {
	// Version is the config version the edge reports for the file, ""
	// when an upstream uses reflection (its descriptors are part of it).
	Version string      `json:"version,omitempty"`
	Routes  []RouteInfo `json:"routes"`
	// Resolved are the upstreams whose services come by server
	// reflection: describe does not dial them, so their routes are
	// resolved when the edge starts (or reloads) the file, not listed.
	Resolved []ResolvedAtStart `json:"resolvedAtStart,omitempty"`
}

// ResolvedAtStart is an upstream whose routes the edge learns by server
// reflection when it starts.
type ResolvedAtStart struct {
	Upstream string   `json:"upstream"`
	Services []string `json:"services"`
}

// Describe reads the config file at path as config.Load does with CheckRoutes (every check,
// descriptor sets loaded) without dialing any upstream, and returns its
// route table: built-in routes and those of services loaded from
// descriptor sets. Upstreams using server reflection are named in
// Resolved instead.
func Describe(path string) (RouteTable, error) {
	cfg, err := config.Load(path, routeCheck(deferReflection(context.Background()), registrations))
	if err != nil {
		return RouteTable{}, err
	}
	routes, err := Routes(cfg)
	if err != nil {
		return RouteTable{}, err
	}
	t := RouteTable{Routes: routes}
	for _, up := range cfg.Upstreams {
		if up.Dynamic() && up.Reflection {
			t.Resolved = append(t.Resolved, ResolvedAtStart{Upstream: up.Name, Services: up.Services})
		}
	}
	if len(t.Resolved) == 0 {
		t.Version = versionOf(cfg).ID
	}
	return t, nil
}

// Write prints t as a table, one route a line: route, RPC, upstream,
// policy roles, limit group, shed group and timeout ("-" for none; a
// stream's maximum duration and idle timeout), then
// the upstreams resolved at start.
func (t RouteTable) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUTE\tRPC\tUPSTREAM\tROLES\tLIMIT GROUP\tSHED GROUP\tTIMEOUT")
	for _, r := range t.Routes {
		timeout := r.Timeout
		if r.MaxDuration != "" {
			timeout = "stream " + r.MaxDuration + ", idle " + r.IdleTimeout
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Method, r.Path, strings.TrimPrefix(r.RPC, "/"), r.Upstream,
			cmp.Or(strings.Join(r.Roles, ","), "-"), cmp.Or(r.LimitGroup, "-"), cmp.Or(r.ShedGroup, "-"), timeout)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range t.Resolved {
		fmt.Fprintf(w, "upstream %s: %s by server reflection, resolved when the edge starts\n", r.Upstream, strings.Join(r.Services, ", "))
	}
	_, err := fmt.Fprintf(w, "%d routes, config version %s\n", len(t.Routes), cmp.Or(t.Version, "known at start"))
	return err
}
