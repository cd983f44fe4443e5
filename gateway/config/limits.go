package config

import (
	"fmt"
	"net/netip"
	"net/textproto"
	"sort"
	"time"

	"github.com/portico-gateway/portico/gateway/ratelimit"
	"github.com/portico-gateway/portico/gateway/route/selector"
)

// Defaults of the limits section, documented once here.
const (
	// DefaultRedisLimitTimeout bounds each rate-limit call to Redis.
	DefaultRedisLimitTimeout = ratelimit.DefaultTimeout
	// DefaultRedisLimitPrefix starts every rate-limit key in Redis.
	DefaultRedisLimitPrefix = "portico:rl:"
)

// LimitsConfig is the edge's rate limits: three layers, all enforced, each
// request admitted only if every layer admits it (a request refused by one
// layer consumes nothing of the others), checked after authentication and
// before anything else is done for the request. The zero value limits
// nothing: a config without a limits section applies none.
type LimitsConfig struct {
	// Plans are named per-caller quotas; a caller's plan is chosen by
	// SubjectPlans, then RolePlans, then DefaultPlan.
	Plans map[string]LimitConfig `yaml:"plans,omitempty"`
	// DefaultPlan is the plan of a caller no mapping names. Empty means
	// callers without a mapped plan have no per-caller limit.
	DefaultPlan string `yaml:"default_plan,omitempty"`
	// SubjectPlans maps a principal's subject ("alice") to a plan.
	SubjectPlans map[string]string `yaml:"subject_plans,omitempty"`
	// RolePlans maps a role ("customer") to a plan.
	RolePlans map[string]string `yaml:"role_plans,omitempty"`
	// Groups are per-route-group quotas, shared by every caller of the
	// group's routes (order writes apart from catalogue reads). A route is
	// in at most one group.
	Groups []LimitGroupConfig `yaml:"groups,omitempty"`
	// Global is the ceiling of the whole edge (per edge, or for all edges
	// with Redis). Absent means none.
	Global *LimitConfig `yaml:"global,omitempty"`
	// FailedAuth limits failed authentications per client address (an
	// IPv6 address counts by its /64): once it is used up, that address's
	// requests with bad or missing credentials get 429 instead of 401;
	// requests that authenticate are never counted nor refused by it.
	// Absent means none.
	FailedAuth *LimitConfig `yaml:"failed_auth,omitempty"`
	// Clients says how the client address and client id are found.
	Clients ClientsConfig `yaml:"clients,omitempty"`
	// Bans bans callers that keep being refused. Absent bans nobody.
	Bans *BanConfig `yaml:"bans,omitempty"`
	// MaxKeys bounds the keys each edge keeps in memory (per kind:
	// buckets, refusal counts, bans); a flood of distinct callers evicts the
	// fullest buckets first. Zero means ratelimit.DefaultMaxKeys.
	MaxKeys int `yaml:"max_keys,omitempty"`
	// Redis tunes the use of the redis section's server, when one is set:
	// then every edge shares the quotas and bans.
	Redis LimitsRedisConfig `yaml:"redis,omitempty"`
}

// LimitConfig is one quota: Rate requests per Period, up to Burst at once.
type LimitConfig struct {
	// Rate is how many requests Period admits on average. Required,
	// positive.
	Rate int `yaml:"rate"`
	// Period is what Rate is counted over. Zero means one second.
	Period time.Duration `yaml:"period,omitempty"`
	// Burst is how many requests may pass at once after a quiet spell.
	// Zero means Rate.
	Burst int `yaml:"burst,omitempty"`
}

// LimitGroupConfig is one route group's quota.
type LimitGroupConfig struct {
	// Name names the group in responses (the layer) and keys: 1-32 of
	// [a-z0-9-], starting with a letter; unique.
	Name string `yaml:"name"`
	// Routes are the selectors of the group's routes. A selector is
	// "[METHOD ]TARGET" (package gateway/route/selector): TARGET is "*"
	// (every route), a path template ("/api/orders/{id}"), a route group
	// ("/api/orders/**": that template and every one below it), an RPC
	// ("portico.order.v1.OrderService/GetOrder", also with a leading "/"
	// or a "." before the method) or a service
	// ("portico.order.v1.OrderService/*"); METHOD narrows it to that
	// method. Required; each must select a route.
	Routes []string `yaml:"routes"`
	// Limit is the group's quota, shared by all its callers.
	Limit LimitConfig `yaml:"limit"`
}

// ClientsConfig says how the edge identifies the client behind a request
// that carries no principal (and for FailedAuth).
type ClientsConfig struct {
	// TrustedProxies are the CIDRs of proxies in front of the edge. When
	// the socket peer is one, the client address is the rightmost address
	// of X-Forwarded-For that is not a trusted proxy. Empty means the
	// socket peer is always the client.
	TrustedProxies []string `yaml:"trusted_proxies,omitempty"`
	// ClientIDHeader, when set (e.g. "X-Client-Id"), is a header that
	// names the caller, trusted over the principal: set it only when a
	// proxy in front of the edge sets (and overwrites) it. Empty means no
	// client-chosen header ever counts.
	ClientIDHeader string `yaml:"client_id_header,omitempty"`
}

// BanConfig bans a caller (its principal, or its address when it has
// none) whose requests are refused more than Threshold times within
// Window, for Duration; banned requests get 429 CALLER_BANNED.
type BanConfig struct {
	Threshold int           `yaml:"threshold"`
	Window    time.Duration `yaml:"window"`
	Duration  time.Duration `yaml:"duration"`
}

// LimitsRedisConfig tunes rate limiting through Redis.
type LimitsRedisConfig struct {
	// Timeout bounds each call; two failures in a row skip Redis for a
	// second, then one trial call checks it. Zero means
	// DefaultRedisLimitTimeout.
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// Outage is what happens while Redis fails: "local" (each edge
	// enforces the quotas alone, from its memory), "open" (admit all but
	// known bans) or "closed" (503 SERVICE_UNAVAILABLE). Empty means
	// "local". /health reports the outage either way.
	Outage string `yaml:"outage,omitempty"`
	// Prefix starts every key. Empty means DefaultRedisLimitPrefix.
	Prefix string `yaml:"prefix,omitempty"`
}

// Enabled reports whether any limit applies.
func (l LimitsConfig) Enabled() bool {
	return len(l.Plans) > 0 || len(l.Groups) > 0 || l.Global != nil || l.FailedAuth != nil
}

// Limit is the quota as package ratelimit takes it.
func (c LimitConfig) Limit() ratelimit.Limit {
	return ratelimit.Limit{Rate: c.Rate, Period: c.Period, Burst: c.Burst}
}

// Policy is the ban policy as package ratelimit takes it; none for nil.
func (b *BanConfig) Policy() ratelimit.BanPolicy {
	if b == nil {
		return ratelimit.BanPolicy{}
	}
	return ratelimit.BanPolicy{Threshold: b.Threshold, Window: b.Window, Duration: b.Duration}
}

var outages = map[string]ratelimit.Outage{"": ratelimit.OutageLocal, "local": ratelimit.OutageLocal,
	"open": ratelimit.OutageOpen, "closed": ratelimit.OutageClosed}

// OutageMode is Outage as package ratelimit takes it.
func (r LimitsRedisConfig) OutageMode() ratelimit.Outage { return outages[r.Outage] }

func (l LimitsConfig) validate(v *validator) {
	names := make([]string, 0, len(l.Plans))
	for n := range l.Plans {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		l.Plans[n].validate(v, fmt.Sprintf("limits.plans[%q]", n))
	}
	plan := func(path, name string) {
		if _, ok := l.Plans[name]; !ok {
			v.add(path, "names no plan of limits.plans: %q", name)
		}
	}
	if l.DefaultPlan != "" {
		plan("limits.default_plan", l.DefaultPlan)
	}
	for _, m := range []struct {
		field string
		plans map[string]string
	}{{"subject_plans", l.SubjectPlans}, {"role_plans", l.RolePlans}} {
		for k, p := range m.plans {
			plan(fmt.Sprintf("limits.%s[%q]", m.field, k), p)
		}
	}
	seen := map[string]bool{}
	for i, g := range l.Groups {
		p := fmt.Sprintf("limits.groups[%d]", i)
		if !validName(g.Name) || seen[g.Name] {
			v.add(p+".name", "want a unique name of 1-32 characters of [a-z0-9-] starting with a letter, got %q", g.Name)
		}
		seen[g.Name] = true
		if len(g.Routes) == 0 {
			v.add(p+".routes", "at least one route is required")
		}
		for j, r := range g.Routes {
			if _, err := selector.Parse(r); err != nil {
				v.add(fmt.Sprintf("%s.routes[%d]", p, j), "%v", err)
			}
		}
		g.Limit.validate(v, p+".limit")
	}
	if l.Global != nil {
		l.Global.validate(v, "limits.global")
	}
	if l.FailedAuth != nil {
		l.FailedAuth.validate(v, "limits.failed_auth")
	}
	l.Clients.validate(v)
	if l.Bans != nil {
		if b := l.Bans; b.Threshold <= 0 || b.Window <= 0 || b.Duration <= 0 {
			v.add("limits.bans", "threshold, window and duration must all be positive")
		} else if err := b.Policy().Validate(); err != nil {
			v.add("limits.bans", "%v", err)
		}
	}
	if l.MaxKeys < 0 {
		v.add("limits.max_keys", "must not be negative")
	}
	v.nonNegative("limits.redis.timeout", l.Redis.Timeout)
	if _, ok := outages[l.Redis.Outage]; !ok {
		v.add("limits.redis.outage", `want "local", "open" or "closed", got %q`, l.Redis.Outage)
	}
}

// validate reports each bad field of one quota on its own path; only when
// all three are well-formed does it ask ratelimit whether they combine
// into a limit it can enforce.
func (c LimitConfig) validate(v *validator, path string) {
	n := len(v.errs)
	if c.Rate <= 0 {
		v.add(path+".rate", "must be positive, got %d", c.Rate)
	}
	v.nonNegative(path+".period", c.Period)
	if c.Burst < 0 {
		v.add(path+".burst", "must not be negative, got %d", c.Burst)
	}
	if len(v.errs) > n {
		return
	}
	if err := c.Limit().Validate(); err != nil {
		v.add(path, "%v", err)
	}
}

func (c ClientsConfig) validate(v *validator) {
	for i, p := range c.TrustedProxies {
		if _, err := netip.ParsePrefix(p); err != nil {
			v.add(fmt.Sprintf("limits.clients.trusted_proxies[%d]", i), "want a CIDR such as 10.0.0.0/8, got %q", p)
		}
	}
	if h := c.ClientIDHeader; h != "" && textproto.CanonicalMIMEHeaderKey(h) == "" {
		v.add("limits.clients.client_id_header", "want a header name, got %q", h)
	}
}

// DevLimits are portico dev's rate limits: generous enough that the
// README's examples and a burst of 40 orders never meet them, tight enough
// that a loop hammering the edge from one caller does. Bans are off.
//
//	caller        50 a second, bursts of 100 (plan "default", every caller)
//	order-writes  100 order creations a second, bursts of 200, all callers
//	global        2000 a second, bursts of 4000
//	failed_auth   20 failed authentications a minute per address, bursts of 20
func DevLimits() LimitsConfig {
	return LimitsConfig{
		Plans:       map[string]LimitConfig{"default": {Rate: 50, Burst: 100}},
		DefaultPlan: "default",
		Groups: []LimitGroupConfig{{Name: "order-writes", Routes: []string{"POST /api/orders"},
			Limit: LimitConfig{Rate: 100, Burst: 200}}},
		Global:     &LimitConfig{Rate: 2000, Burst: 4000},
		FailedAuth: &LimitConfig{Rate: 20, Period: time.Minute},
	}
}
