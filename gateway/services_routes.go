package gateway

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/gateway/transcode"
)

// builtIn returns the registrations whose upstream serves the compiled-in
// handlers: an upstream with services of its own (a built-in one moved to
// the descriptor path) drops them.
func builtIn(cfg config.Config, regs []registration) []registration {
	out := make([]registration, 0, len(regs))
	for _, reg := range served(cfg, regs) {
		if !slices.ContainsFunc(cfg.Upstreams, func(u config.UpstreamConfig) bool { return u.Name == reg.upstream && u.Dynamic() }) {
			out = append(out, reg)
		}
	}
	return out
}

// loadedRoutes returns the routes of every run-time service, upstream by
// upstream in config order. A method the edge cannot serve is an error
// naming the upstream and the service.
func loadedRoutes(cfg config.Config) ([]*route.Route, error) {
	var all []*route.Route
	for i, up := range cfg.Upstreams {
		if !up.Dynamic() {
			continue
		}
		sds, err := services(cfg, up.Name)
		if err != nil {
			return nil, err
		}
		for _, sd := range sds {
			rs, err := route.FromService(sd, up.Name)
			if err == nil {
				err = underAPI(rs)
			}
			if err != nil {
				return nil, fmt.Errorf("gateway config: upstreams[%d] (%s): service %s: %w", i, up.Name, sd.FullName(), err)
			}
			all = append(all, rs...)
		}
	}
	return all, nil
}

// underAPI refuses a binding whose template is not /api or below it: the
// edge serves REST routes under /api only (serveHTTP), and the paths
// outside it are its own (/health, /healthz/*, /metrics, /openapi.json,
// /problems/*, /docs), so such a route would never be served, yet would
// be listed by describe and /admin/routes as if it were. "/api:verb" is
// outside too (its path is not "/api" nor below "/api/").
func underAPI(rs []*route.Route) error {
	for _, r := range rs {
		if r.Pattern != "/api" && !strings.HasPrefix(r.Pattern, "/api/") {
			return fmt.Errorf("%s (%s) is outside /api: the edge serves REST routes under /api only, the paths outside it are its own (/health, /metrics, /openapi.json, /problems, /docs)", r.Key(), r.RPC[1:])
		}
	}
	return nil
}

// registerLoaded serves sn's routes of run-time services on its mux,
// through each upstream's connection (its client chain), in table order
// (the mux, like the table, lets the last registered win).
func registerLoaded(cfg config.Config, sn *snapshot) error {
	dyn := map[string]bool{}
	for _, up := range cfg.Upstreams {
		dyn[up.Name] = up.Dynamic()
	}
	for _, r := range sn.table.Routes() {
		if !dyn[r.Upstream] {
			continue
		}
		if err := transcode.Register(sn.mux, r, captureConn{sn.upstreams[r.Upstream].cc}); err != nil {
			return fmt.Errorf("gateway: %w", err)
		}
	}
	return nil
}

// routeDiff lists the routes a reload adds and removes, as Diff lines:
// "+ route: POST /v1/shipments (acme.shipping.v1.ShippingService/CreateShipment @ shipping)".
func routeDiff(old, next *route.Table) []string {
	key := func(r *route.Route) string { return r.Key() + " (" + r.RPC[1:] + " @ " + r.Upstream + ")" }
	before, after := map[string]bool{}, map[string]bool{}
	for _, r := range old.Routes() {
		before[key(r)] = true
	}
	var out []string
	for _, r := range next.Routes() {
		after[key(r)] = true
		if !before[key(r)] {
			out = append(out, "+ route: "+key(r))
		}
	}
	for _, r := range old.Routes() {
		if !after[key(r)] {
			out = append(out, "- route: "+key(r))
		}
	}
	return out
}

// documentLoaded adds the routes of cfg's run-time services to the
// snapshot's /openapi.json (openapi_loaded.go).
func (s *Server) documentLoaded(cfg config.Config, sn *snapshot) {
	if !hasDynamic(cfg) {
		return
	}
	loaded := map[string]bool{}
	var sds []protoreflect.ServiceDescriptor
	for _, up := range cfg.Upstreams {
		loaded[up.Name] = up.Dynamic()
		if ls := loadedOf(cfg); up.Dynamic() && ls != nil {
			sds = append(sds, ls.byUpstream[up.Name]...)
		}
	}
	base := sn.openAPI
	if base == nil {
		base = s.openAPI
	}
	var pol *auth.Policy // the built-in policy's roles, as apidoc states them
	if len(cfg.Auth.Policy) > 0 {
		pol = sn.policy
	}
	d, err := documentLoaded(base, sds, sn.table.Routes(), loaded, pol)
	if err != nil {
		s.log.Warn("/openapi.json does not document the services loaded at run time", "error", err)
		return
	}
	sn.openAPI = d
}
