package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/health"
	"github.com/portico-gateway/portico/gateway/nonce"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/ratelimit"
	"github.com/portico-gateway/portico/gateway/route"
)

// Layer names, as the 429's layer member and the RateLimit policies say
// them; a route group's layer is its name.
const (
	layerCaller     = "caller"
	layerGlobal     = "global"
	layerFailedAuth = "failed_auth"
	layerBan        = "ban"
)

// limiter enforces LimitsConfig; nil when the config has no limits.
type limiter struct {
	*limitBackend
	plans      map[string]ratelimit.Limit
	cfg        config.LimitsConfig
	groups     map[*route.Route]limitGroup
	global     *ratelimit.Limit
	failedAuth *ratelimit.Limit
	clients    clients
	// Prepared once for every decision (ratelimit.Quota.Prepare): the
	// global quota, and each plan's quota without its key.
	globalQuota *ratelimit.Quota
	planQuotas  map[string]planQuota
	// Each layer's RateLimit-Policy member, built once (policyMember).
	globalMember, failedAuthMember *policyMember
	// now is the local store's clock in tests; nil passes each request's
	// arrival time to the store, so a decision reads no clock.
	now func() time.Time
}

// limitBackend is a limiter's state: its store (buckets and bans) and,
// with Redis, the client and pipeline. Snapshots whose limits and Redis
// settings are the same share one, so a reload keeps every bucket; refs
// counts them, and the last to drain closes it.
type limitBackend struct {
	store    ratelimit.Store
	failover *ratelimit.Failover // with Redis
	redis    *redis.Client       // with Redis; closed by close
	pipeline *ratelimit.Pipeline // with Redis; stopped by close
	probe    *redisProbe         // with Redis; stopped by close
	key      string              // the settings it was built from
	refs     atomic.Int64
}

type limitGroup struct {
	name, key string
	limit     ratelimit.Limit
	quota     ratelimit.Quota // key and limit, prepared
	member    *policyMember
}

// planQuota is a plan's prepared quota without its key, with the caller
// layer's policy member for its limit.
type planQuota struct {
	quota  ratelimit.Quota
	member *policyMember
}

// newLimiter builds the limiter of cfg.Limits over the route table: in
// memory, or shared through cfg.Redis.URL with a local fallback. now, when
// not nil, replaces the local store's clock (tests).
func newLimiter(cfg config.Config, routes []*route.Route, log *slog.Logger, now func() time.Time, prev *limiter, probed func(bool)) (*limiter, error) {
	lc := cfg.Limits
	if !lc.Enabled() {
		return nil, nil
	}
	l := &limiter{cfg: lc, plans: map[string]ratelimit.Limit{}, planQuotas: map[string]planQuota{},
		groups: map[*route.Route]limitGroup{}, clients: newClients(lc.Clients), now: now}
	for name, p := range lc.Plans {
		l.plans[name] = p.Limit()
		l.planQuotas[name] = planQuota{ratelimit.Quota{Limit: p.Limit()}.Prepare(), newPolicyMember(layerCaller, p.Limit())}
	}
	selected, err := groupRoutes("limits.groups", lc.Groups, limitGroupParts, routes)
	if err != nil {
		return nil, err
	}
	lgs := make([]limitGroup, len(lc.Groups))
	for i, g := range lc.Groups {
		lgs[i] = limitGroup{name: g.Name, key: "group:" + g.Name, limit: g.Limit.Limit()}
		lgs[i].quota = ratelimit.Quota{Key: lgs[i].key, Limit: lgs[i].limit}.Prepare()
		lgs[i].member = newPolicyMember(g.Name, lgs[i].limit)
	}
	for r, i := range selected {
		l.groups[r] = lgs[i]
	}
	if lc.Global != nil {
		g := lc.Global.Limit()
		l.global = &g
		q := ratelimit.Quota{Key: "global", Limit: g}.Prepare()
		l.globalQuota = &q
		l.globalMember = newPolicyMember(layerGlobal, g)
	}
	if lc.FailedAuth != nil {
		f := lc.FailedAuth.Limit()
		l.failedAuth = &f
		l.failedAuthMember = newPolicyMember(layerFailedAuth, f)
	}
	// The previous backend is shared only now, when nothing above can
	// fail: a reference taken before a refusal would never be released.
	key := fmt.Sprintf("%#v|%s", lc, cfg.Redis.URL)
	if prev != nil && prev.limitBackend.key == key {
		prev.limitBackend.refs.Add(1)
		l.limitBackend = prev.limitBackend
		return l, nil
	}
	l.limitBackend = &limitBackend{key: key}
	l.limitBackend.refs.Store(1)
	opts := []ratelimit.LocalOption{ratelimit.WithMaxKeys(lc.MaxKeys), ratelimit.WithBans(lc.Bans.Policy())}
	if now != nil {
		opts = append(opts, ratelimit.WithClock(now))
	}
	local, err := ratelimit.NewLocal(opts...)
	if err != nil {
		return nil, fmt.Errorf("gateway: limits: %w", err)
	}
	l.store = local
	if cfg.Redis.URL != "" {
		if err := l.shared(cfg, local, log, probed); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// shared puts the Redis store, behind a failover to local, in front.
func (l *limiter) shared(cfg config.Config, local *ratelimit.Local, log *slog.Logger, probed func(bool)) error {
	timeout := cmp.Or(l.cfg.Redis.Timeout, config.DefaultRedisLimitTimeout)
	opt, err := redis.ParseURL(cfg.Redis.URL)
	if err != nil {
		return fmt.Errorf("gateway config: redis.url: %w", err)
	}
	// Tight timeouts and no retries: a dead Redis must cost a request
	// at most one timeout, and the breaker then skips it.
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = timeout, timeout, timeout, timeout
	opt.MaxRetries, opt.ContextTimeoutEnabled = -1, true
	l.redis = redis.NewClient(opt)
	prefix := l.cfg.Redis.Prefix
	if prefix == "" {
		prefix = config.DefaultRedisLimitPrefix
	}
	shared, err := ratelimit.NewRedis(l.redis, prefix, l.cfg.Bans.Policy())
	if err != nil {
		return fmt.Errorf("gateway: limits: %w", err)
	}
	// Concurrent decisions go to Redis together, as one script run that
	// decides each as if alone: as exact, with a fraction of Redis's work.
	if l.pipeline, err = ratelimit.NewPipeline(shared, l.redis, 0, 0, timeout); err != nil {
		return fmt.Errorf("gateway: limits: %w", err)
	}
	outage := l.cfg.Redis.OutageMode()
	l.failover, err = ratelimit.NewFailover(l.pipeline, local, ratelimit.FailoverSettings{
		Timeout: timeout, Outage: outage,
		OnChange: func(degraded bool) {
			if degraded {
				log.Warn("rate limits: Redis is failing; deciding by the outage policy", "outage", outage.String())
			} else {
				log.Info("rate limits: Redis is back; quotas are shared again")
			}
		},
	})
	if err != nil {
		return fmt.Errorf("gateway: limits: %w", err)
	}
	l.store = l.failover
	l.probe = startRedisProbe(l.redis, nonce.DefaultTimeout, DefaultRedisProbeInterval, func(up bool) {
		if up {
			log.Info("rate limits: Redis answers PING again")
		} else {
			log.Warn("rate limits: Redis does not answer PING; deciding by the outage policy while requests fail there", "outage", outage.String())
		}
	}, probed)
	return nil
}

// close drops l's reference to its backend; the last one stops the
// pipeline and releases the Redis client.
func (l *limiter) close() error {
	if l == nil || l.limitBackend == nil || l.refs.Add(-1) != 0 || l.redis == nil {
		return nil
	}
	l.probe.close()
	l.pipeline.Close()
	return l.redis.Close()
}

type rateLimitHealth struct {
	Redis  string `json:"redis"`
	Outage string `json:"outage"`
	Detail string `json:"detail,omitempty"`
}

// redisDown reports whether the rate limiter's Redis is failing: its own
// PINGs (which run with no traffic) or the requests' failover say so.
func (l *limiter) redisDown() bool {
	return l != nil && l.failover != nil && (!l.probe.up() || l.failover.Degraded())
}

// health reports the rate limiter's Redis, as a dependency (DOWN while its
// probe gets no answer or decisions fail there) and as rateLimits, which
// says what the edge does meanwhile; refusing is true when the edge
// refuses requests for it (outage: closed). nil without Redis.
func (l *limiter) health() (dep *health.DependencyStatus, rl *rateLimitHealth, refusing bool) {
	if l == nil || l.failover == nil {
		return nil, nil, false
	}
	dep = &health.DependencyStatus{Name: "redis", Status: health.Up}
	rl = &rateLimitHealth{Redis: health.Up, Outage: l.failover.Outage().String()}
	if l.redisDown() {
		dep.Status, rl.Redis = health.Down, health.Down
		rl.Detail = "Redis is failing: rate limits are " + outageDetail[l.failover.Outage()]
		refusing = l.failover.Outage() == ratelimit.OutageClosed
	}
	return dep, rl, refusing
}

var outageDetail = map[ratelimit.Outage]string{
	ratelimit.OutageLocal:  "failing open to per-instance local limits",
	ratelimit.OutageOpen:   "failing open: only known bans are enforced",
	ratelimit.OutageClosed: "failing closed: requests are refused",
}

// callerKey keys a request's caller: the trusted client id, else the
// principal (its subject within its tenant), else the client address.
//
// It returns the key after prefix, in one string with it: the caller
// quota's key ("caller:" + key) and the key itself share one allocation.
func (l *limiter) callerKey(prefix string, r *http.Request, p auth.Principal) (withPrefix, key string) {
	switch id := l.clients.clientID(r); {
	case id != "":
		withPrefix = prefix + "client:" + id
	case p.Subject != "" && p.Tenant != "":
		withPrefix = prefix + "subject:" + p.Tenant + "/" + p.Subject
	case p.Subject != "":
		withPrefix = prefix + "subject:" + p.Subject
	default:
		withPrefix = prefix + "addr:" + l.clients.addr(r)
	}
	return withPrefix, withPrefix[len(prefix):]
}

// plan returns the caller's plan, as its prepared quota without a key: the
// principal's own (a JWT claim, an API key's plan) when limits.plans has
// it, else by subject, by role, or the default.
func (l *limiter) plan(p auth.Principal) (planQuota, bool) {
	if q, ok := l.planQuotas[p.Plan]; ok && p.Plan != "" {
		return q, true
	}
	name, ok := l.cfg.SubjectPlans[p.Subject]
	if !ok {
		name, ok = l.cfg.RolePlans[p.Role]
	}
	if !ok {
		name = l.cfg.DefaultPlan
	}
	q, ok := l.planQuotas[name]
	return q, ok
}

// limitRequest is what one request asks of the store, with each quota's
// layer name and, when built once for it, policy member.
type limitRequest struct {
	req     ratelimit.Request
	quotas  [ratelimit.MaxQuotas]ratelimit.Quota
	layers  [ratelimit.MaxQuotas]string
	members [ratelimit.MaxQuotas]*policyMember
}

// add appends layer's quota q; m, when not nil, is layer's policy member
// for q's limit.
func (lr *limitRequest) add(layer string, q ratelimit.Quota, m *policyMember) {
	n := len(lr.req.Quotas)
	lr.quotas[n], lr.layers[n], lr.members[n] = q, layer, m
	lr.req.Quotas = lr.quotas[:n+1]
}

// build sets lr, empty, to the quotas of a request: for a failed
// authentication the failed_auth quota of its address; else the caller's
// plan, its route's group and the global ceiling.
func (l *limiter) build(lr *limitRequest, r *http.Request, rt *route.Route, p auth.Principal, authErr error) {
	lr.req.Quotas = lr.quotas[:0]
	if authErr != nil {
		// A nonce store that failed is not the caller's failure.
		if l.failedAuth != nil && !errors.Is(authErr, auth.ErrUnavailable) {
			addr := l.clients.addr(r)
			lr.add(layerFailedAuth, ratelimit.Quota{Key: "failed-auth:" + addr, Limit: *l.failedAuth}, l.failedAuthMember)
			lr.req.Caller = "addr:" + addr
		}
		return
	}
	callerQuotaKey, caller := l.callerKey("caller:", r, p)
	lr.req.Caller = caller
	if q, ok := l.plan(p); ok {
		lr.add(layerCaller, q.quota.For(callerQuotaKey), q.member)
	}
	if g, ok := l.groups[rt]; ok && rt != nil {
		lr.add(g.name, g.quota, g.member)
	}
	if l.globalQuota != nil {
		lr.add(layerGlobal, *l.globalQuota, l.globalMember)
	}
}

// limit is the edge's rate-limit step, run right after authentication
// with its outcome: it answers 429 (or 503 when Redis is down and the
// policy is closed) and reports true when the request must stop there;
// otherwise it sets the quota headers of the admitted request.
func (s *Server) limit(w *responseWriter, r *http.Request, rt *route.Route, p auth.Principal, authErr error) bool {
	l := w.ex.snap.limits
	if l == nil {
		return false
	}
	lr := &w.ex.limits // part of the request's one allocation
	l.build(lr, r, rt, p, authErr)
	if len(lr.req.Quotas) == 0 {
		return false
	}
	if l.now == nil {
		lr.req.Now = w.ex.start // the clock was read when the request arrived
	}
	d, err := l.store.Allow(r.Context(), &lr.req)
	if err != nil {
		pr := problem.New(problem.CodeServiceUnavailable, "The gateway cannot check rate limits right now; nothing was sent to any service.")
		pr.RetryAfter = 1
		s.writeProblem(w, r, pr)
		return true
	}
	if d.Allowed && authErr != nil {
		return false // a failed authentication within its limit: the 401 follows, unadorned
	}
	writeLimitHeaders(w.Header(), lr, &d)
	if d.Allowed {
		return false
	}
	pr := limitProblem(lr, &d)
	s.metrics.RateLimited(pr.Layer)
	s.writeProblem(w, r, pr)
	return true
}

// limitLayers names every layer lc can refuse in: the fixed ones and
// its route groups.
func limitLayers(lc config.LimitsConfig) []string {
	out := []string{layerCaller, layerGlobal, layerFailedAuth, layerBan}
	for _, g := range lc.Groups {
		out = append(out, g.Name)
	}
	return out
}

// limitProblem is the 429 of a refusal or a ban.
func limitProblem(lr *limitRequest, d *ratelimit.Decision) *problem.Problem {
	var pr *problem.Problem
	if d.Banned {
		pr = problem.New(problem.CodeCallerBanned, "Too many of this caller's requests were refused; all are refused until the ban ends.")
		pr.Layer = layerBan
	} else {
		layer, lim := lr.layers[d.Denied], d.Results[d.Denied].Limit
		pr = problem.New(problem.CodeRateLimitExceeded, fmt.Sprintf("The %s rate limit of %d requests per %s is used up.", layerText(layer), lim.Rate, lim.Period))
		pr.Layer = layer
	}
	pr.RetryAfter = ceilSeconds(d.RetryAfter)
	return pr
}

func layerText(layer string) string {
	switch layer {
	case layerCaller:
		return "caller's"
	case layerGlobal:
		return "gateway's global"
	case layerFailedAuth:
		return "failed-authentication"
	}
	return "route group " + strconv.Quote(layer)
}

// writeLimitHeaders sets the quota headers: RateLimit-Policy and RateLimit
// per draft-ietf-httpapi-ratelimit-headers-10 (one list member per layer,
// named by its layer; q is the bucket's capacity, its burst, and w its
// Period in seconds, r what is left, t the seconds until it is full again,
// or until a request fits for the refusing layer), and X-RateLimit-Limit /
// -Remaining of the refusing
// layer, or of the layer with the least left. X-RateLimit-Limit is the
// capacity Remaining counts down from, the bucket's burst (capacity), as
// GitHub, Kong and Envoy's rate limit service mean these headers: a fresh
// caller reads Limit N and Remaining N-1, never Remaining above Limit.
func writeLimitHeaders(h http.Header, lr *limitRequest, d *ratelimit.Decision) {
	// q is the capacity, not the Rate: the draft's r is the remaining
	// quota units of q, and a token bucket's burst is the most a client
	// can use at once, so with burst above rate a q of the rate read
	// "q=50" beside "r=99". The refill, Rate per Period, is the admin
	// API's and the docs'.
	// The four values are appended to one stack buffer and become one
	// string, sliced in four: no fmt on the request path (%q is
	// strconv.Quote).
	var buf [256]byte
	b := buf[:0]
	tightest := 0
	for i := range lr.req.Quotas {
		res := d.Results[i]
		if i > 0 {
			b = append(b, ", "...)
		}
		if m := lr.members[i]; m != nil && m.limit == res.Limit {
			b = append(b, m.member...)
		} else { // a decision without its results (a Redis outage's, failing open)
			b = appendQuotaParams(strconv.AppendQuote(b, lr.layers[i]), res.Limit)
		}
		if res.Remaining < d.Results[tightest].Remaining {
			tightest = i
		}
	}
	policyEnd := len(b)
	for i := range lr.req.Quotas {
		res := d.Results[i]
		t := ceilSeconds(res.ResetAfter)
		if i == d.Denied {
			t = ceilSeconds(d.RetryAfter)
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		if m := lr.members[i]; m != nil {
			b = append(b, m.quoted...)
		} else {
			b = strconv.AppendQuote(b, lr.layers[i])
		}
		b = strconv.AppendInt(append(b, ";r="...), int64(res.Remaining), 10)
		b = strconv.AppendInt(append(b, ";t="...), int64(t), 10)
	}
	if d.Denied >= 0 {
		tightest = d.Denied
	}
	remaining := d.Results[tightest].Remaining
	if !d.Allowed {
		remaining = 0
	}
	stateEnd := len(b)
	b = strconv.AppendInt(b, int64(capacity(d.Results[tightest].Limit)), 10)
	limitEnd := len(b)
	b = strconv.AppendInt(b, int64(remaining), 10)
	all := string(b)
	vs := []string{all[:policyEnd], all[policyEnd:stateEnd], all[stateEnd:limitEnd], all[limitEnd:]}
	h[hdrRateLimitPolicy] = vs[0:1:1]
	h[hdrRateLimit] = vs[1:2:2]
	h[hdrXRateLimitLimit] = vs[2:3:3]
	h[hdrXRateLimitRemaining] = vs[3:4:4]
}

// policyMember is one layer's RateLimit-Policy list member for one
// limit, "layer";q=<capacity>;w=<seconds>, and its quoted name, built
// when the limiter is: they depend on the layer and its limit only, not
// on a decision. writeLimitHeaders uses the member when the decision's
// result carries that limit (a store's results carry the quota's limit
// with its defaults), else builds it as before.
type policyMember struct {
	limit  ratelimit.Limit // with the defaults a decision's result has
	quoted string          // strconv.Quote(layer)
	member string
}

func newPolicyMember(layer string, lim ratelimit.Limit) *policyMember {
	lim = ratelimit.Quota{Limit: lim}.Prepare().Limit
	m := &policyMember{limit: lim, quoted: strconv.Quote(layer)}
	m.member = string(appendQuotaParams([]byte(m.quoted), lim))
	return m
}

// appendQuotaParams appends a policy member's parameters: q, the bucket's
// capacity, and w, its Period in whole seconds.
func appendQuotaParams(b []byte, lim ratelimit.Limit) []byte {
	b = strconv.AppendInt(append(b, ";q="...), int64(capacity(lim)), 10)
	return strconv.AppendInt(append(b, ";w="...), int64(ceilSeconds(lim.Period)), 10)
}

// The quota headers' keys as http.Header.Set would store them (RFC 9110:
// field names are case-insensitive), canonicalised once.
var (
	hdrRateLimitPolicy     = http.CanonicalHeaderKey("RateLimit-Policy")
	hdrRateLimit           = http.CanonicalHeaderKey("RateLimit")
	hdrXRateLimitLimit     = http.CanonicalHeaderKey("X-RateLimit-Limit")
	hdrXRateLimitRemaining = http.CanonicalHeaderKey("X-RateLimit-Remaining")
)

// capacity is what a full bucket of l admits at once: Burst, or Rate when
// Burst is zero (ratelimit.Limit's zero meaning).
func capacity(l ratelimit.Limit) int {
	if l.Burst == 0 {
		return l.Rate
	}
	return l.Burst
}

// ceilSeconds is d in whole seconds, rounded up; 0 for d <= 0.
func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

// processNonces is the nonce store of redis.url when New is given none:
// with redis.url, the Redis every edge shares (fail closed: a Redis that does
// not answer within nonce.DefaultTimeout, twice, makes signed requests 503
// with Retry-After), with the client to close; else one in memory that
// remembers since now.
func processNonces(cfg config.Config, now time.Time) (auth.NonceStore, *redis.Client) {
	if cfg.Redis.URL == "" {
		return &auth.MemoryNonces{Since: now}, nil
	}
	opt, err := redis.ParseURL(cfg.Redis.URL)
	if err != nil { // validated; keep the edge up with local nonces
		return &auth.MemoryNonces{Since: now}, nil
	}
	// Its own bound, not limits.redis.timeout's: a nonce check fails
	// closed, so it waits longer and retries once (nonce.Attempts).
	timeout := nonce.DefaultTimeout
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = timeout, timeout, timeout, timeout
	opt.MaxRetries, opt.ContextTimeoutEnabled = -1, true
	c := redis.NewClient(opt)
	store, _ := nonce.NewRedis(c, "portico:nonce:", timeout) // a non-nil client and a positive timeout cannot fail
	return store, c
}
