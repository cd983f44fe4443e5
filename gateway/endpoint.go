package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/protoopt"
	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/gateway/route/selector"
	apiv1 "github.com/portico-gateway/portico/gen/portico/api/v1"
)

// endpoint is a route with the edge's settings for it.
type endpoint struct {
	*route.Route
	timeout, maxTimeout time.Duration
	maxBody             int64
	location            *location
	idempotencyKey      bool
	respondAsync        bool // honours Prefer: respond-async (async.go)
	output              protoreflect.MessageDescriptor
	update              *updateRule // an update whose body may imply its mask
	// maxDuration and idleTimeout bound a streaming route's stream
	// (streams, routes.overrides) instead of timeout.
	maxDuration, idleTimeout time.Duration
	stale                    *staleRule // nil: never answered from a copy (stale.go)
	// etagIn: the request has an AIP-154 etag field, so If-Match is
	// forwarded; etagOut is the response's etag field, nil without one
	// (conditional.go).
	etagIn  bool
	etagOut protoreflect.FieldDescriptor
}

// buildRoutes reads the routes of every registration cfg has an upstream
// for and resolves their settings from cfg (defaults applied).
func buildRoutes(cfg config.Config, regs []registration) (*route.Table, map[*route.Route]*endpoint, error) {
	ups := map[string]config.UpstreamConfig{}
	for _, u := range cfg.Upstreams {
		ups[u.Name] = u
	}
	if err := checkUpstreams(cfg, regs); err != nil {
		return nil, nil, err
	}
	var all []*route.Route
	for _, reg := range builtIn(cfg, regs) {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(reg.service))
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if err != nil || !ok {
			return nil, nil, fmt.Errorf("gateway: service %s is not linked in", reg.service)
		}
		rs, err := route.FromService(sd, reg.upstream)
		if err != nil {
			return nil, nil, fmt.Errorf("gateway: %w", err)
		}
		all = append(all, rs...)
	}
	loaded, err := loadedRoutes(cfg)
	if err != nil {
		return nil, nil, err
	}
	table, err := route.NewTable(append(all, loaded...))
	if err != nil {
		return nil, nil, fmt.Errorf("gateway: %w", err)
	}
	eps, err := endpoints(cfg, table, ups)
	return table, eps, err
}

// served returns the registrations whose upstream cfg names, in order: a
// config serves any subset of the compiled-in services, and the routes of
// the others are not served (404; check-config says so, Unserved).
func served(cfg config.Config, regs []registration) []registration {
	names := map[string]bool{}
	for _, u := range cfg.Upstreams {
		names[u.Name] = true
	}
	var out []registration
	for _, reg := range regs {
		if names[reg.upstream] {
			out = append(out, reg)
		}
	}
	return out
}

// unserved names the compiled-in services cfg has no upstream for.
func unserved(cfg config.Config, regs []registration) []registration {
	on := served(cfg, regs)
	var out []registration
	for _, reg := range regs {
		if !slices.ContainsFunc(on, func(o registration) bool { return o.service == reg.service }) {
			out = append(out, reg)
		}
	}
	return out
}

// checkUpstreams reports every upstream no registration uses.
func checkUpstreams(cfg config.Config, regs []registration) error {
	var errs []error
	used := map[string]bool{}
	for _, u := range cfg.Upstreams {
		used[u.Name] = u.Dynamic()
	}
	for _, reg := range regs {
		used[reg.upstream] = true
	}
	for i, u := range cfg.Upstreams {
		if !used[u.Name] {
			errs = append(errs, fmt.Errorf("upstreams[%d].name: %q serves no registered service", i, u.Name))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("gateway config: %w", errors.Join(errs...))
}

func endpoints(cfg config.Config, table *route.Table, ups map[string]config.UpstreamConfig) (map[*route.Route]*endpoint, error) {
	overrides, err := resolveOverrides(cfg.Routes.Overrides, table.Routes())
	if err != nil {
		return nil, err
	}
	eps := map[*route.Route]*endpoint{}
	for _, r := range table.Routes() {
		ep := &endpoint{
			Route:       r,
			timeout:     ups[r.Upstream].Timeout,
			maxTimeout:  cfg.Routes.MaxTimeout,
			maxBody:     cfg.Routes.MaxBodyBytes,
			output:      r.Desc.Output(),
			update:      updateOf(r),
			maxDuration: cfg.Streams.MaxDuration,
			idleTimeout: cfg.Streams.IdleTimeout,
			etagIn:      etagField(r.Input) != nil,
		}
		ep.etagOut = etagField(ep.output)
		o, ok := overrides[r]
		if ep.stale, err = staleRuleOf(r, o.StaleIfError); err != nil {
			return nil, fmt.Errorf("gateway: %s: %w", cmp.Or(o.key, r.RPC), err)
		}
		if ok {
			ep.apply(o.RouteOverride)
			if ep.timeout > ep.maxTimeout {
				return nil, fmt.Errorf("gateway config: routes.overrides[%q]: timeout %v exceeds max_timeout %v", o.key, ep.timeout, ep.maxTimeout)
			}
		} else if ep.timeout > ep.maxTimeout {
			return nil, fmt.Errorf("gateway config: %s: the %s upstream's timeout %v exceeds routes.max_timeout %v", r.Key(), r.Upstream, ep.timeout, ep.maxTimeout)
		}
		if err := ep.applyEdge(protoopt.Edge(r.Desc)); err != nil {
			return nil, fmt.Errorf("gateway: %s: %w", r.RPC, err)
		}
		eps[r] = ep
	}
	return eps, nil
}

func (ep *endpoint) apply(o config.RouteOverride) {
	if o.Timeout > 0 {
		ep.timeout = o.Timeout
	}
	if o.MaxTimeout > 0 {
		ep.maxTimeout = o.MaxTimeout
	}
	if o.MaxBodyBytes > 0 {
		ep.maxBody = o.MaxBodyBytes
	}
	if o.MaxDuration > 0 {
		ep.maxDuration = o.MaxDuration
	}
	if o.IdleTimeout > 0 {
		ep.idleTimeout = o.IdleTimeout
	}
}

// applyEdge sets what the RPC's (portico.api.v1.edge) option adds: a 201
// with a Location (RFC 9110 section 15.3.2, also when replayed) and a
// required Idempotency-Key, and whether Prefer: respond-async is honoured.
// A nil option adds nothing.
func (ep *endpoint) applyEdge(e *apiv1.Edge) error {
	loc, err := parseLocation(e.GetLocation(), ep.output)
	if err != nil {
		return err
	}
	ep.location, ep.idempotencyKey, ep.respondAsync = loc, e.GetIdempotencyKey(), e.GetRespondAsync()
	return nil
}

type keyedOverride struct {
	key string
	config.RouteOverride
}

// resolveOverrides maps each route to the one override selecting it.
func resolveOverrides(ovs map[string]config.RouteOverride, routes []*route.Route) (map[*route.Route]keyedOverride, error) {
	out := map[*route.Route]keyedOverride{}
	for key, o := range ovs {
		selected, err := selector.Resolve(key, routes)
		if err != nil {
			return nil, fmt.Errorf("gateway config: routes.overrides[%q]: %w", key, err)
		}
		for _, r := range selected {
			if prev, dup := out[r]; dup {
				return nil, fmt.Errorf("gateway config: routes.overrides: %q and %q both select %s", prev.key, key, r.Key())
			}
			out[r] = keyedOverride{key, o}
		}
	}
	return out, nil
}
