package gateway

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/bulkhead"
	"github.com/portico-gateway/portico/interceptors/retry"
)

// RouteInfo is one route as a config makes the edge serve it: what the
// admin API's /admin/routes lists and check-config and describe print
// (writeRoutes).
type RouteInfo struct {
	Method         string   `json:"method"`
	Path           string   `json:"path"`
	RPC            string   `json:"rpc"`
	Upstream       string   `json:"upstream"`
	Timeout        string   `json:"timeout"`
	MaxTimeout     string   `json:"maxTimeout"`
	MaxBodyBytes   int64    `json:"maxBodyBytes"`
	Roles          []string `json:"roles"` // the policy: roles allowed to call
	IdempotencyKey bool     `json:"idempotencyKey,omitempty"`
	// LimitGroup is the limits.groups entry whose quota the route shares,
	// "" for none; ShedGroup the shed.groups entry capping it.
	LimitGroup string `json:"limitGroup"`
	ShedGroup  string `json:"shedGroup"`
	// MaxDuration and IdleTimeout bound a server-streaming route's
	// stream instead of Timeout; "" on unary routes.
	MaxDuration string `json:"maxDuration,omitempty"`
	IdleTimeout string `json:"idleTimeout,omitempty"`
}

// Routes returns the routes cfg (defaults applied, valid) serves, in the
// route table's order.
func Routes(cfg config.Config) ([]RouteInfo, error) {
	cfg, err := withServices(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	table, eps, err := buildRoutes(cfg, registrations)
	if err != nil {
		return nil, err
	}
	policy, err := buildPolicy(cfg, table)
	if err != nil {
		return nil, err
	}
	return routeInfos(cfg, table.Routes(), eps, policy), nil
}

func routeInfos(cfg config.Config, routes []*route.Route, eps map[*route.Route]*endpoint, policy *auth.Policy) []RouteInfo {
	out := make([]RouteInfo, 0, len(routes))
	limitGroups := groupNames(cfg.Limits.Groups, limitGroupParts, routes)
	shedGroups := groupNames(cfg.Shed.Groups, shedGroupParts, routes)
	for _, r := range routes {
		ep := eps[r]
		ri := RouteInfo{
			Method: ep.Method, Path: ep.Pattern, RPC: ep.RPC, Upstream: ep.Upstream,
			Timeout: ep.timeout.String(), MaxTimeout: ep.maxTimeout.String(), MaxBodyBytes: ep.maxBody,
			Roles: policy.Roles(r), IdempotencyKey: ep.idempotencyKey,
			LimitGroup: limitGroups[r], ShedGroup: shedGroups[r],
		}
		if r.Stream {
			ri.MaxDuration, ri.IdleTimeout = ep.maxDuration.String(), ep.idleTimeout.String()
		}
		out = append(out, ri)
	}
	return out
}

// WriteSummary prints what cfg (valid, defaults applied) makes the edge
// do: version, listeners, shutdown, limits, upstreams with their chains
// and TLS, auth, then the route table as describe prints it
// (writeRoutes).
func WriteSummary(w io.Writer, cfg config.Config) error {
	routes, err := Routes(cfg)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format+"\n", args...) }
	p("version\t%s", versionOf(cfg).ID)
	p("listen\t%s", cfg.Listen)
	p("admin_listen\t%s", cmp.Or(cfg.AdminListen, "off"))
	p("shutdown\tdrain_delay %v, shutdown_grace %v (longest route timeout %v)", cfg.DrainDelay, cfg.ShutdownGrace, cfg.LongestTimeout())
	p("limits\tmax_body_bytes %d, http.max_header_bytes %d, routes.max_timeout %v", cfg.Routes.MaxBodyBytes, cfg.HTTP.MaxHeaderBytes, cfg.Routes.MaxTimeout)
	p("connections\t%s", connSummary(cfg.HTTP.MaxConnections, openFileLimit()))
	p("readiness\trequires %s", cmp.Or(strings.Join(cfg.Ops.ReadyRequires, ", "), "no upstream"))
	p("auth\t%s", authSummary(cfg.Auth))
	p("\nupstreams (%d):", len(cfg.Upstreams))
	for _, u := range cfg.Upstreams {
		c := u.Chain()
		p("  %s\t[%s]\ttimeout %v\tretry %d attempts\tbreaker %d failures / %v cool-down\tbulkhead %d in flight\t%s",
			u.Name, strings.Join(u.Addresses, ", "), u.Timeout, cmp.Or(c.Retry.MaxAttempts, retry.DefaultMaxAttempts),
			cmp.Or(c.Breaker.ConsecutiveFailures, breaker.DefaultConsecutiveFailures), cmp.Or(c.Breaker.CoolDown, breaker.DefaultCoolDown),
			cmp.Or(c.Bulkhead.MaxInFlight, bulkhead.DefaultMax), u.TLS.Summary())
	}
	p("\nroutes (%d):", len(routes))
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeRoutes(w, routes)
}

// authSummary names every kind of credential a accepts (legacy tokens,
// API keys, JWTs, signed apps), with the keys' and apps' roles; only
// when there is none does it say that every /api request is 401.
func authSummary(a config.AuthConfig) string {
	roles := map[string]int{}
	var parts []string
	count := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	for _, t := range a.Tokens {
		roles[t.Role]++
	}
	for _, k := range a.APIKeys {
		for _, r := range k.Roles {
			roles[r]++
		}
	}
	for _, app := range a.SignedApps.Apps {
		for _, r := range app.Roles {
			roles[r]++
		}
	}
	count(len(a.Tokens), "static tokens")
	count(len(a.APIKeys), "API keys")
	count(len(a.SignedApps.Apps), "signed app secrets")
	if a.JWT.Issuer != "" {
		parts = append(parts, "JWTs from "+a.JWT.Issuer)
	}
	if len(parts) == 0 {
		return "no credentials (auth.api_keys, auth.jwt, auth.signed_apps): every /api request is 401"
	}
	var rs []string
	for _, r := range slices.Sorted(maps.Keys(roles)) {
		rs = append(rs, fmt.Sprintf("%s %d", r, roles[r]))
	}
	if len(rs) > 0 {
		return strings.Join(parts, ", ") + " (roles of keys and apps: " + strings.Join(rs, ", ") + ")"
	}
	return strings.Join(parts, ", ")
}

// connSummary says what http.max_connections, configured as max, caps the
// API's connections at, with nofile the open-file limit here (0: unknown
// or unlimited), which the default derives from.
func connSummary(max int, nofile uint64) string {
	switch {
	case max == -1:
		return "http.max_connections -1: no cap (only the open-file limit stops connections)"
	case max > 0 && nofile > 0 && uint64(max)+config.MinConnectionReserve > nofile:
		return fmt.Sprintf("http.max_connections %d: WARNING above the open-file limit %d here less %d for upstreams and files; "+
			"accepting can fail with EMFILE (too many open files) before the cap", max, nofile, config.MinConnectionReserve)
	case max > 0:
		return fmt.Sprintf("http.max_connections %d", max)
	case nofile == 0:
		return fmt.Sprintf("http.max_connections %d (default: open-file limit unknown or unlimited here)", config.DefaultMaxConnections(0))
	}
	return fmt.Sprintf("http.max_connections %d (default: open-file limit %d here, less max(%d, limit/5))",
		config.DefaultMaxConnections(nofile), nofile, config.MinConnectionReserve)
}
