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
// /admin/routes on an edge running that file, with the upstreams they
// go to.
type RouteTable struct {
	// Version is the config version the edge reports for the file, ""
	// when an upstream's services come by reflection and were not
	// fetched (its descriptors are part of it).
	Version   string          `json:"version,omitempty"`
	Routes    []RouteInfo     `json:"routes"`
	Upstreams []TableUpstream `json:"upstreams"`
	// Resolved are the upstreams whose services come by server
	// reflection when describe did not dial them (no --reflect): their
	// routes are resolved when the edge starts (or reloads) the file, not
	// listed.
	Resolved []ResolvedAtStart `json:"resolvedAtStart,omitempty"`
}

// TableUpstream is one upstream as the route table shows it: where it is
// and whether the edge dials it over TLS.
type TableUpstream struct {
	Name      string   `json:"name"`
	Addresses []string `json:"addresses"`
	// TLS is whether the edge dials it over TLS (config's
	// UpstreamTLSConfig.On); ServerName the name checked in its
	// certificates, "" for the host dialled.
	TLS        bool   `json:"tls"`
	ServerName string `json:"serverName,omitempty"`
	tlsSummary string
}

// ResolvedAtStart is an upstream whose routes the edge learns by server
// reflection when it starts.
type ResolvedAtStart struct {
	Upstream string   `json:"upstream"`
	Services []string `json:"services"`
}

// Describe reads the config file at path as config.Load does with
// CheckRoutes (every check, descriptor sets loaded) and returns its route
// table: built-in routes and those of services loaded from descriptor
// sets. Upstreams using server reflection are dialled only when reflect
// is true (as check-config and the edge do, each bounded by the
// reflection timeout); otherwise they are named in Resolved instead and
// nothing is dialled.
func Describe(path string, reflect bool) (RouteTable, error) {
	ctx := context.Background()
	if !reflect {
		ctx = deferReflection(ctx)
	}
	cfg, err := config.Load(path, routeCheck(ctx, registrations))
	if err != nil {
		return RouteTable{}, err
	}
	return tableOf(cfg)
}

// tableOf is the route table of cfg (valid, defaults applied): Describe's,
// and the route part of check-config's summary.
func tableOf(cfg config.Config) (RouteTable, error) {
	routes, err := Routes(cfg)
	if err != nil {
		return RouteTable{}, err
	}
	t := RouteTable{Routes: routes}
	deferred := map[string]bool{}
	if ls := loadedOf(cfg); ls != nil {
		for _, name := range ls.deferred {
			deferred[name] = true
		}
	}
	for _, up := range cfg.Upstreams {
		t.Upstreams = append(t.Upstreams, TableUpstream{Name: up.Name, Addresses: up.Addresses,
			TLS: up.TLS.On(), ServerName: up.TLS.ServerName, tlsSummary: up.TLS.Summary()})
		if deferred[up.Name] {
			t.Resolved = append(t.Resolved, ResolvedAtStart{Upstream: up.Name, Services: up.Services})
		}
	}
	if len(t.Resolved) == 0 {
		t.Version = versionOf(cfg).ID
	}
	return t, nil
}

// Write prints t: the routes (writeRoutes), the upstreams with their
// TLS, the upstreams resolved at start, and the count and version.
func (t RouteTable) Write(w io.Writer) error {
	if err := writeRoutes(w, t.Routes); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nUPSTREAM\tADDRESSES\tTLS")
	for _, u := range t.Upstreams {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Name, strings.Join(u.Addresses, ", "), strings.TrimPrefix(u.tlsText(), "tls "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range t.Resolved {
		fmt.Fprintf(w, "upstream %s: %s by server reflection, resolved when the edge starts (describe --reflect dials it to list them)\n",
			r.Upstream, strings.Join(r.Services, ", "))
	}
	_, err := fmt.Fprintf(w, "%d routes, config version %s\n", len(t.Routes), cmp.Or(t.Version, "known at start"))
	return err
}

// tlsText is u's TLS as the summaries print it: "tls off", or "tls on"
// with what it checks.
func (u TableUpstream) tlsText() string {
	if u.tlsSummary != "" {
		return u.tlsSummary
	}
	if !u.TLS { // a table decoded from JSON
		return "tls off"
	}
	return strings.TrimSpace("tls on " + u.ServerName)
}

// writeRoutes is the one printer of a route table, describe's and
// check-config's: one route a line with its RPC, upstream, policy roles,
// limit group, shed group and timeout ("-" for none; a stream's maximum
// duration and idle timeout).
func writeRoutes(w io.Writer, routes []RouteInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUTE\tRPC\tUPSTREAM\tROLES\tLIMIT GROUP\tSHED GROUP\tTIMEOUT")
	for _, r := range routes {
		timeout := r.Timeout
		if r.MaxDuration != "" {
			timeout = "stream " + r.MaxDuration + ", idle " + r.IdleTimeout
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Method, r.Path, strings.TrimPrefix(r.RPC, "/"), r.Upstream,
			cmp.Or(strings.Join(r.Roles, ","), "-"), cmp.Or(r.LimitGroup, "-"), cmp.Or(r.ShedGroup, "-"), timeout)
	}
	return tw.Flush()
}
