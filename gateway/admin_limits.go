package gateway

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/edgemetrics"
	"github.com/portico-gateway/portico/gateway/health"
	"github.com/portico-gateway/portico/gateway/ratelimit"
	"github.com/portico-gateway/portico/gateway/shed"
)

// maxListedBans bounds the bans GET /admin/limits lists; bans.more says
// when there are others.
const maxListedBans = 100

// adminBansTimeout bounds reading the bans from Redis (a few SCAN calls,
// each also bounded by limits.redis.timeout).
const adminBansTimeout = 2 * time.Second

// LimitsInfo is GET /admin/limits: the live snapshot's rate limits (nil
// without a limits section) and load shedding.
type LimitsInfo struct {
	Version    string          `json:"version"`
	RateLimits *RateLimitsInfo `json:"rateLimits"`
	Shedding   ShedInfo        `json:"shedding"`
}

// RateLimitsInfo is the rate limiter: its backend, its three layers (per
// caller, per route group, global), the failed-authentication pre-limit
// and the callers banned now.
type RateLimitsInfo struct {
	Backend    string           `json:"backend"`         // "local" (this edge's memory) or "redis" (shared by every edge)
	Redis      *RedisLimitInfo  `json:"redis,omitempty"` // with backend redis
	Caller     CallerLimitInfo  `json:"caller"`
	Groups     []GroupLimitInfo `json:"groups"`
	Global     *LimitInfo       `json:"global"`     // nil: no ceiling
	FailedAuth *LimitInfo       `json:"failedAuth"` // nil: failed authentications are not limited
	Bans       BansInfo         `json:"bans"`
}

// LimitInfo is one quota, defaults applied.
type LimitInfo struct {
	Rate   int    `json:"rate"`
	Period string `json:"period"`
	Burst  int    `json:"burst"`
}

// RedisLimitInfo is the shared backend's state, as /health reports it.
type RedisLimitInfo struct {
	Status  string `json:"status"` // UP, or DOWN while Redis fails (its PINGs, or the requests sent there) and the outage policy decides
	Outage  string `json:"outage"` // local, open or closed
	Prefix  string `json:"prefix"`
	Timeout string `json:"timeout"`
}

// CallerLimitInfo is the per-caller layer: the plans and how a caller's is
// chosen (subject mappings are only counted; /admin/config lists them).
type CallerLimitInfo struct {
	Plans        map[string]LimitInfo `json:"plans"`
	DefaultPlan  string               `json:"defaultPlan,omitempty"`
	RolePlans    map[string]string    `json:"rolePlans,omitempty"`
	SubjectPlans int                  `json:"subjectPlans"`
}

// GroupLimitInfo is one route group's quota.
type GroupLimitInfo struct {
	Name   string   `json:"name"`
	Routes []string `json:"routes"`
	LimitInfo
}

// BansInfo is the ban policy and up to maxListedBans callers banned now,
// from Source: redis, or this edge's memory (local: the backend, or its
// copy of Redis's bans while Redis fails).
type BansInfo struct {
	Policy *BanPolicyInfo  `json:"policy"` // nil: nobody is banned
	Source string          `json:"source"`
	Active []ratelimit.Ban `json:"active"`
	More   bool            `json:"more"`            // more are banned than listed
	Error  string          `json:"error,omitempty"` // why Redis's list could not be read (the local one is shown)
}

// BanPolicyInfo bans a caller refused more than Threshold times within
// Window, for Duration.
type BanPolicyInfo struct {
	Threshold int    `json:"threshold"`
	Window    string `json:"window"`
	Duration  string `json:"duration"`
}

// ShedInfo is load shedding: the settings and each in-flight cap.
type ShedInfo struct {
	MaxWait string `json:"maxWait"`
	// MaxQueue is the effective bound on waiters per cap: shed.max_queue
	// (default 64) while MaxWait is positive, and 0 (nobody waits) when
	// max_wait is 0, its default, or max_queue is -1.
	MaxQueue   int             `json:"maxQueue"`
	RetryAfter string          `json:"retryAfter"`
	Scopes     []ShedScopeInfo `json:"scopes"` // the edge's cap first, then route groups by name
	// PerKey are the caps each client address and each caller has on its
	// own: client, then caller (admission.go).
	PerKey []ShedKeyInfo `json:"perKey"`
}

// ShedKeyInfo is one per-key in-flight cap: client
// (shed.max_in_flight_per_client, requests whose bodies are arriving, by
// client address) or caller (shed.max_in_flight_per_caller, requests in
// flight, by authenticated caller). Its refusals within the last five
// minutes are /admin/traffic's limited["in_flight_per_" + Name].
type ShedKeyInfo struct {
	Name        string `json:"name"`
	Setting     string `json:"setting"`
	MaxInFlight int    `json:"maxInFlight"` // per key; 0: no cap
	Holders     int    `json:"holders"`     // keys holding a slot now
	Largest     int    `json:"largest"`     // the most slots one key holds now
	Refused     int64  `json:"refused"`     // 429 TOO_MANY_IN_FLIGHT since the edge started (portico_gateway_in_flight_refused_total)
}

// ShedScopeInfo is one in-flight cap: the edge's or a route group's.
type ShedScopeInfo struct {
	Name        string `json:"name"`
	MaxInFlight int    `json:"maxInFlight"`
	InFlight    int    `json:"inFlight"`
	Waiting     int    `json:"waiting"`
	Shed        int64  `json:"shed"` // refusals since the edge started (portico_gateway_shed_total)
}

// limitsAdminRoutes shows the rate limits and the shedding caps.
func (s *Server) limitsAdminRoutes() map[string]adminRoute {
	return map[string]adminRoute{"/admin/limits": {http.MethodGet, false, s.adminLimits}}
}

func (s *Server) adminLimits(w http.ResponseWriter, r *http.Request, sn *snapshot) {
	sh := sn.shed.info()
	sh.PerKey = s.perKeyInfo(sn.cfg.Shed)
	writeJSON(w, http.StatusOK, LimitsInfo{Version: sn.version.ID, RateLimits: sn.limits.info(r.Context()), Shedding: sh})
}

// perKeyInfo describes the per-client and per-caller caps, live.
func (s *Server) perKeyInfo(c config.ShedConfig) []ShedKeyInfo {
	caps := []struct {
		name, setting string
		limit         int
		held          *shed.Keyed
	}{
		{edgemetrics.CapClient, "shed.max_in_flight_per_client", c.MaxInFlightPerClient, &s.bodies},
		{edgemetrics.CapCaller, "shed.max_in_flight_per_caller", c.MaxInFlightPerCaller, &s.callers},
	}
	out := make([]ShedKeyInfo, 0, len(caps))
	for _, k := range caps {
		holders, largest := k.held.Stats()
		out = append(out, ShedKeyInfo{Name: k.name, Setting: k.setting, MaxInFlight: max(k.limit, 0),
			Holders: holders, Largest: largest, Refused: s.metrics.InFlightRefusals(k.name)})
	}
	return out
}

// info describes l; nil for no limiter.
func (l *limiter) info(ctx context.Context) *RateLimitsInfo {
	if l == nil {
		return nil
	}
	lc := l.cfg
	out := &RateLimitsInfo{Backend: "local", Groups: []GroupLimitInfo{},
		Caller:     CallerLimitInfo{Plans: map[string]LimitInfo{}, DefaultPlan: lc.DefaultPlan, RolePlans: lc.RolePlans, SubjectPlans: len(lc.SubjectPlans)},
		Global:     limitInfo(lc.Global),
		FailedAuth: limitInfo(lc.FailedAuth),
	}
	for name, p := range lc.Plans {
		out.Caller.Plans[name] = *limitInfo(&p)
	}
	for _, g := range lc.Groups {
		out.Groups = append(out.Groups, GroupLimitInfo{Name: g.Name, Routes: g.Routes, LimitInfo: *limitInfo(&g.Limit)})
	}
	if l.failover != nil {
		out.Backend = "redis"
		out.Redis = &RedisLimitInfo{Status: health.Up, Outage: l.failover.Outage().String(),
			Prefix: cmp.Or(lc.Redis.Prefix, config.DefaultRedisLimitPrefix), Timeout: cmp.Or(lc.Redis.Timeout, config.DefaultRedisLimitTimeout).String()}
		if l.redisDown() { // its PINGs (the first at start) or the requests' failover
			out.Redis.Status = health.Down
		}
	}
	out.Bans = l.bans(ctx)
	return out
}

// bans lists the callers banned now: from Redis while it is healthy, else
// from this edge's memory.
func (l *limiter) bans(ctx context.Context) BansInfo {
	b := BansInfo{Source: "local", Active: []ratelimit.Ban{}}
	if p := l.cfg.Bans; p != nil {
		b.Policy = &BanPolicyInfo{Threshold: p.Threshold, Window: p.Window.String(), Duration: p.Duration.String()}
	}
	local, _ := l.store.(*ratelimit.Local)
	if l.failover != nil {
		local = l.failover.Local()
		if l.redisDown() {
			b.Error = "Redis is not answering: the bans listed are this edge's copy"
		} else {
			ctx, cancel := context.WithTimeout(ctx, adminBansTimeout)
			defer cancel()
			active, more, err := l.pipeline.Shared().Bans(ctx, l.redis, maxListedBans)
			if err == nil {
				b.Source, b.Active, b.More = "redis", append(b.Active, active...), more
				return b
			}
			b.Error = err.Error()
		}
	}
	if local != nil {
		active, more := local.Bans(maxListedBans)
		b.Active, b.More = append(b.Active, active...), more
	}
	return b
}

func limitInfo(c *config.LimitConfig) *LimitInfo {
	if c == nil {
		return nil
	}
	return &LimitInfo{Rate: c.Rate, Period: cmp.Or(c.Period, time.Second).String(), Burst: cmp.Or(c.Burst, c.Rate)}
}

// info describes sh's caps, live.
func (sh *shedder) info() ShedInfo {
	out := ShedInfo{Scopes: []ShedScopeInfo{}}
	if sh == nil {
		return out
	}
	out.MaxWait, out.RetryAfter = sh.wait.String(), (time.Duration(sh.retryAfter) * time.Second).String()
	for _, sc := range sh.scopes() {
		out.MaxQueue = max(sc.queue, 0) // -1 is "nobody waits"
		var m dto.Metric
		_ = sc.shed.Write(&m)
		out.Scopes = append(out.Scopes, ShedScopeInfo{Name: sc.name, MaxInFlight: sc.lim.Max(), InFlight: sc.lim.InFlight(),
			Waiting: sc.lim.Waiting(), Shed: int64(m.GetCounter().GetValue())})
	}
	slices.SortStableFunc(out.Scopes, func(a, b ShedScopeInfo) int {
		if a.Name == edgeScope || b.Name == edgeScope {
			return boolCmp(b.Name == edgeScope, a.Name == edgeScope)
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
