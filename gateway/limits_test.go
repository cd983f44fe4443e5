package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/portico-gateway/portico/gateway/auth/authtest"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/ratelimit"
	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/internal/redistest"
)

// frozenClock is a clock tests move by hand.
type frozenClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *frozenClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *frozenClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// limitHarness is a harness with limits and a frozen limiter clock.
func limitHarness(t *testing.T, limits config.LimitsConfig, more ...func(*config.Config)) (*harness, *frozenClock) {
	t.Helper()
	clock := &frozenClock{now: time.Unix(1_800_000_000, 0)}
	h := newHarness(t, setup{
		cfg: func(c *config.Config) {
			c.Limits = limits
			for _, f := range more {
				f(c)
			}
		},
		opts: []Option{func(o *options) { o.limitClock = clock.Now }},
	})
	okStubs(h)
	return h, clock
}

func plan(rate int, period time.Duration) config.LimitConfig {
	return config.LimitConfig{Rate: rate, Period: period}
}

// TestSeed000Example: deploy/ratelimit-seed000.yaml reproduces seed 000:
// 13 requests from one client within a second, the 13th answered 429 at
// the edge with the seed's headers, and inventory saw 12 calls.
func TestSeed000Example(t *testing.T) {
	c, err := config.Load(filepath.Join("..", "deploy", "ratelimit-seed000.yaml"), CheckRoutes)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := limitHarness(t, c.Limits, func(cfg *config.Config) { cfg.Auth = c.Auth })
	for i := range 12 {
		r := h.do("GET", "/api/inventory/keyboard-001", readerToken, "")
		if r.status != 200 || r.header.Get("X-RateLimit-Limit") != "12" || r.header.Get("X-RateLimit-Remaining") != strconv.Itoa(11-i) {
			t.Fatalf("request %d: %d, X-RateLimit-Limit %q, -Remaining %q; want 200, 12, %d", i+1, r.status,
				r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Remaining"), 11-i)
		}
	}
	r := h.do("GET", "/api/inventory/keyboard-001", readerToken, "")
	want := map[string]string{
		"Content-Type":          "application/problem+json",
		"X-RateLimit-Limit":     "12",
		"X-RateLimit-Remaining": "0",
		"Retry-After":           "1",
		"RateLimit-Policy":      `"caller";q=12;w=1`,
		"RateLimit":             `"caller";r=0;t=1`,
	}
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("13th: status %d, want 429; body %s", r.status, r.body)
	}
	for k, v := range want {
		if got := r.header.Get(k); !strings.HasPrefix(got, v) {
			t.Errorf("13th: %s = %q, want %q", k, got, v)
		}
	}
	body := r.json(t)
	for k, v := range map[string]any{
		"type": "/problems/rate-limit-exceeded", "status": float64(429), "code": "RATE_LIMIT_EXCEEDED",
		"instance": "/api/inventory/keyboard-001", "layer": "caller", "traceId": r.header.Get("X-Trace-Id"),
		"detail": "The caller's rate limit of 12 requests per 1s is used up.",
	} {
		if body[k] != v {
			t.Errorf("13th: body %s = %v, want %v", k, body[k], v)
		}
	}
	if _, n := h.inv.last(); n != 12 {
		t.Errorf("inventory saw %d calls, want 12 (the 13th must not reach it)", n)
	}
	// The client id header, trusted by this config, is its own caller.
	if r := h.do("GET", "/api/inventory/keyboard-001", readerToken, "", "X-Client-Id: app-2"); r.status != 200 {
		t.Errorf("another X-Client-Id: %d, want 200", r.status)
	}
}

// TestLimitLayers: the caller, route group and global layers are all
// enforced, the one that refused is named, and a refusal consumes nothing
// of the other layers.
func TestLimitLayers(t *testing.T) {
	h, _ := limitHarness(t, config.LimitsConfig{
		Plans:       map[string]config.LimitConfig{"default": plan(100, time.Minute)},
		DefaultPlan: "default",
		Groups: []config.LimitGroupConfig{{Name: "catalogue-reads", Routes: []string{"GET /api/inventory/{sku}"},
			Limit: plan(3, time.Minute)}},
		Global: &config.LimitConfig{Rate: 5, Period: time.Minute},
	})
	for range 3 {
		if r := h.do("GET", "/api/inventory/a", aliceToken, ""); r.status != 200 {
			t.Fatalf("catalogue read: %d %s", r.status, r.body)
		}
	}
	for range 2 {
		r := h.do("GET", "/api/inventory/a", aliceToken, "")
		if r.status != 429 || r.json(t)["layer"] != "catalogue-reads" {
			t.Fatalf("4th catalogue read: %d %s, want 429 by catalogue-reads", r.status, r.body)
		}
		if got := r.header.Get("RateLimit"); !strings.Contains(got, `"caller";r=97;`) || !strings.Contains(got, `"global";r=2;`) {
			t.Errorf("refused by the group: RateLimit %q, want the caller's 97 and global's 2 left untouched", got)
		}
	}
	if _, n := h.inv.last(); n != 3 {
		t.Errorf("inventory saw %d calls, want 3", n)
	}
	// The group's refusals left global 2 of 5: bob's order reads get them.
	for range 2 {
		if r := h.do("GET", "/api/orders", bobToken, ""); r.status != 200 {
			t.Fatalf("order read: %d %s", r.status, r.body)
		}
	}
	r := h.do("GET", "/api/orders", bobToken, "")
	if r.status != 429 || r.json(t)["layer"] != "global" {
		t.Fatalf("past the global ceiling: %d %s, want 429 by global", r.status, r.body)
	}
	if _, n := h.order.last(); n != 2 {
		t.Errorf("order saw %d calls, want 2", n)
	}
	// The access line of a 429 names the caller it limited.
	var limited []map[string]any
	for _, l := range h.logs.lines(t, "request") {
		if l["status"] == float64(429) {
			limited = append(limited, l)
		}
	}
	if len(limited) != 3 || limited[0]["subject"] != "alice" || limited[2]["subject"] != "bob" {
		t.Errorf("429 access lines %v, want 3 naming alice, alice, bob", limited)
	}
}

// TestLimitPlans: plans give callers different quotas, by subject, by role
// or by default.
func TestLimitPlans(t *testing.T) {
	h, _ := limitHarness(t, config.LimitsConfig{
		Plans:        map[string]config.LimitConfig{"normal": plan(2, time.Minute), "vip": plan(5, time.Minute), "staff": plan(3, time.Minute)},
		DefaultPlan:  "normal",
		SubjectPlans: map[string]string{"alice": "vip"},
		RolePlans:    map[string]string{"reader": "staff"},
	})
	for _, tt := range []struct {
		token string
		want  int
	}{{aliceToken, 5}, {bobToken, 2}, {readerToken, 3}} {
		n := 0
		for range 10 {
			if h.do("GET", "/api/inventory/a", tt.token, "").status != 200 {
				break
			}
			n++
		}
		if n != tt.want {
			t.Errorf("%s: %d admitted, want %d", tt.token, n, tt.want)
		}
	}
}

// TestLimitBans: a caller refused more than the threshold is banned with
// CALLER_BANNED and the ban's Retry-After; others are not.
func TestLimitBans(t *testing.T) {
	h, clock := limitHarness(t, config.LimitsConfig{
		Plans:       map[string]config.LimitConfig{"default": plan(1, time.Minute)},
		DefaultPlan: "default",
		Bans:        &config.BanConfig{Threshold: 2, Window: time.Minute, Duration: time.Hour},
	})
	codes := []string{}
	for range 5 {
		r := h.do("GET", "/api/inventory/a", aliceToken, "")
		code, _ := r.json(t)["code"].(string)
		if r.status == 200 {
			code = "200"
		}
		codes = append(codes, code)
		if code == "CALLER_BANNED" && r.header.Get("Retry-After") != "3600" {
			t.Errorf("ban: Retry-After %q, want 3600", r.header.Get("Retry-After"))
		}
	}
	want := "200 RATE_LIMIT_EXCEEDED RATE_LIMIT_EXCEEDED CALLER_BANNED CALLER_BANNED"
	if got := strings.Join(codes, " "); got != want {
		t.Errorf("alice's answers: %s\nwant %s", got, want)
	}
	clock.Add(2 * time.Minute) // alice's quota is back, her ban is not
	if r := h.do("GET", "/api/inventory/a", aliceToken, ""); r.status != 429 || r.json(t)["code"] != "CALLER_BANNED" {
		t.Errorf("banned alice after 2m: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/api/inventory/a", bobToken, ""); r.status != 200 {
		t.Errorf("bob: %d, want 200", r.status)
	}
	clock.Add(time.Hour)
	if r := h.do("GET", "/api/inventory/a", aliceToken, ""); r.status != 200 {
		t.Errorf("alice after the ban: %d %s", r.status, r.body)
	}
}

// TestLimitFailedAuth: failed authentications per address are limited;
// good credentials from the same address are neither counted nor refused.
func TestLimitFailedAuth(t *testing.T) {
	h, _ := limitHarness(t, config.LimitsConfig{FailedAuth: &config.LimitConfig{Rate: 2, Period: time.Minute}})
	for i, want := range []int{401, 401, 429, 429} {
		r := h.do("GET", "/api/inventory/a", "wrong-token", "")
		if r.status != want {
			t.Fatalf("bad token %d: %d, want %d", i+1, r.status, want)
		}
		if want == 429 && r.json(t)["layer"] != "failed_auth" {
			t.Errorf("bad token %d: layer %v, want failed_auth", i+1, r.json(t)["layer"])
		}
	}
	if r := h.do("GET", "/api/inventory/a", "", ""); r.status != 429 {
		t.Errorf("no token from the same address: %d, want 429", r.status)
	}
	for range 5 {
		if r := h.do("GET", "/api/inventory/a", aliceToken, ""); r.status != 200 {
			t.Fatalf("good token from the same address: %d, want 200", r.status)
		}
	}
	if _, n := h.inv.last(); n != 5 {
		t.Errorf("inventory saw %d calls, want 5", n)
	}
}

// TestDevLimits: portico dev's limits let a burst of 40 orders through and
// stop a tight loop of reads from one caller.
func TestDevLimits(t *testing.T) {
	h, _ := limitHarness(t, config.DevLimits())
	for i := range 40 {
		r := h.do("POST", "/api/orders", aliceToken, `{"lines":[{"sku":"keyboard-001","quantity":1}],"paymentMethod":"pm_card_ok"}`,
			"Idempotency-Key: order-"+strconv.Itoa(i))
		if r.status != 201 && r.status != 200 {
			t.Fatalf("order %d of a burst of 40: %d %s", i+1, r.status, r.body)
		}
	}
	refused := 0
	for range 200 {
		if h.do("GET", "/api/inventory/a", bobToken, "").status == 429 {
			refused++
		}
	}
	if refused == 0 {
		t.Error("a tight loop of 200 reads from one caller was never refused")
	}
}

// TestLimitsRedisTwoEdges: two edges sharing one Redis give a client
// alternating between them one quota.
func TestLimitsRedisTwoEdges(t *testing.T) {
	url, _, prefix := redistest.Shared(t)
	limits := config.LimitsConfig{
		Plans: map[string]config.LimitConfig{"default": plan(5, time.Minute)}, DefaultPlan: "default",
		Redis: config.LimitsRedisConfig{Prefix: prefix, Timeout: time.Second},
	}
	withRedis := func(c *config.Config) { c.Redis.URL = url }
	a, _ := limitHarness(t, limits, withRedis)
	b, _ := limitHarness(t, limits, withRedis)
	admitted := 0
	for i := range 10 {
		h := a
		if i%2 == 1 {
			h = b
		}
		if r := h.do("GET", "/api/inventory/a", aliceToken, ""); r.status == 200 {
			admitted++
		} else if r.status != 429 {
			t.Fatalf("request %d: %d %s", i+1, r.status, r.body)
		}
	}
	_, na := a.inv.last()
	_, nb := b.inv.last()
	if admitted != 5 || na+nb != 5 {
		t.Errorf("two edges admitted %d (upstreams saw %d+%d), want 5: one quota", admitted, na, nb)
	}
}

// TestLimitsRedisOutage: Redis killed mid-test. Limits fail open to local
// ones, /health says so, the log says so.
func TestLimitsRedisOutage(t *testing.T) {
	srv := redistest.Private(t)
	h, _ := limitHarness(t, config.LimitsConfig{
		Plans: map[string]config.LimitConfig{"default": plan(3, time.Hour)}, DefaultPlan: "default",
		Redis: config.LimitsRedisConfig{Timeout: 200 * time.Millisecond},
	}, func(c *config.Config) { c.Redis.URL = srv.URL })
	if r := h.do("GET", "/api/inventory/a", aliceToken, ""); r.status != 200 || r.header.Get("X-RateLimit-Remaining") != "2" {
		t.Fatalf("through Redis: %d, remaining %q", r.status, r.header.Get("X-RateLimit-Remaining"))
	}
	srv.Kill()
	statuses := []int{}
	for range 5 {
		statuses = append(statuses, h.do("GET", "/api/inventory/a", aliceToken, "").status)
	}
	// Locally alice has a fresh quota of 3: each edge enforces it alone.
	if got := statuses; got[0] != 200 || got[1] != 200 || got[2] != 200 || got[3] != 429 || got[4] != 429 {
		t.Errorf("during the outage: %v, want 3 admitted by the local limit, then 429", got)
	}
	r := h.do("GET", "/health", "", "")
	deps, _ := r.json(t)["dependencies"].([]any)
	rl, _ := r.json(t)["rateLimits"].(map[string]any)
	found := false
	for _, d := range deps {
		if m := d.(map[string]any); m["name"] == "redis" {
			found = m["status"] == "DOWN" && rl["redis"] == "DOWN" && rl["outage"] == "local" &&
				strings.Contains(rl["detail"].(string), "per-instance local limits")
		}
	}
	if !found {
		t.Errorf("/health = %s, want redis DOWN failing open to local limits", r.body)
	}
	if len(h.logs.lines(t, "rate limits: Redis is failing; deciding by the outage policy")) != 1 {
		t.Errorf("want one log line about the outage; logs:\n%s", h.logs.String())
	}
}

// TestLimitsConfigErrors: each bad limits field is named.
func TestLimitsConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		limits config.LimitsConfig
		want   string
	}{
		{"zero rate", config.LimitsConfig{Plans: map[string]config.LimitConfig{"p": {}}}, `limits.plans["p"].rate`},
		{"unknown default plan", config.LimitsConfig{DefaultPlan: "gold"}, "limits.default_plan"},
		{"unknown subject plan", config.LimitsConfig{SubjectPlans: map[string]string{"alice": "gold"}}, `limits.subject_plans["alice"]`},
		{"bad group name", config.LimitsConfig{Groups: []config.LimitGroupConfig{{Name: "Orders", Routes: []string{"POST /api/orders"}, Limit: plan(1, 0)}}}, "limits.groups[0].name"},
		{"group without routes", config.LimitsConfig{Groups: []config.LimitGroupConfig{{Name: "o", Limit: plan(1, 0)}}}, "limits.groups[0].routes"},
		{"bad selector", config.LimitsConfig{Groups: []config.LimitGroupConfig{{Name: "o", Routes: []string{"orders"}, Limit: plan(1, 0)}}}, "limits.groups[0].routes[0]"},
		{"negative global", config.LimitsConfig{Global: &config.LimitConfig{Rate: -1}}, "limits.global.rate"},
		{"bad proxy", config.LimitsConfig{Clients: config.ClientsConfig{TrustedProxies: []string{"10.0.0.1"}}}, "limits.clients.trusted_proxies[0]"},
		{"half a ban", config.LimitsConfig{Bans: &config.BanConfig{Threshold: 10}}, "limits.bans"},
		{"bad outage", config.LimitsConfig{Redis: config.LimitsRedisConfig{Outage: "maybe"}}, "limits.redis.outage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Dev(0)
			c.Limits = tt.limits
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want+":") {
				t.Errorf("Validate() = %v, want an error naming %s", err, tt.want)
			}
		})
	}
	c := config.Dev(0)
	c.Limits.Groups = append(c.Limits.Groups, config.LimitGroupConfig{Name: "none", Routes: []string{"GET /api/nowhere"}, Limit: plan(1, 0)})
	if _, err := New(context.Background(), c); err == nil || !strings.Contains(err.Error(), "selects no route") {
		t.Errorf("New with a group selecting no route = %v", err)
	}
}

// TestSignedNoncesInRedis: with redis.url the signed apps' nonces are in
// Redis, shared by two edges (a replay on the other edge is refused), and
// with Redis killed a signed request fails closed: 503 with Retry-After.
func TestSignedNoncesInRedis(t *testing.T) {
	srv := redistest.Private(t)
	withRedis := func(c *config.Config) { c.Redis.URL = srv.URL }
	a, _ := limitHarness(t, config.LimitsConfig{}, withRedis)
	b, _ := limitHarness(t, config.LimitsConfig{}, withRedis)
	signed := func(nonce string) []string {
		return authtest.SignedHeaders(appSecret, "demo-app", "GET", "/api/inventory/a", "", nil, time.Now().Unix(), nonce)
	}
	if r := a.do("GET", "/api/inventory/a", "", "", signed("nonce-0000000001")...); r.status != 200 {
		t.Fatalf("signed request: %d %s", r.status, r.body)
	}
	if r := b.do("GET", "/api/inventory/a", "", "", signed("nonce-0000000001")...); r.status != 401 || r.json(t)["code"] != "REQUEST_REPLAYED" {
		t.Fatalf("replay on the other edge: %d %s, want 401 REQUEST_REPLAYED", r.status, r.body)
	}
	srv.Kill()
	r := a.do("GET", "/api/inventory/a", "", "", signed("nonce-0000000002")...)
	if r.status != 503 || r.json(t)["code"] != "SERVICE_UNAVAILABLE" || r.header.Get("Retry-After") == "" {
		t.Errorf("Redis down: %d %s (Retry-After %q), want 503 SERVICE_UNAVAILABLE with Retry-After", r.status, r.body, r.header.Get("Retry-After"))
	}
	if d, _ := r.json(t)["detail"].(string); !strings.Contains(d, "did not answer within 250ms (2 attempts)") {
		t.Errorf("Redis down: detail %q does not say why", d)
	}
	if _, n := a.inv.last(); n != 1 {
		t.Errorf("inventory saw %d calls, want 1", n)
	}
}

// TestLimitPlanFromPrincipal: a plan the credential carries (an API key's
// plan) wins over the config's mappings.
func TestLimitPlanFromPrincipal(t *testing.T) {
	sum := sha256.Sum256([]byte(partnerKey))
	h, _ := limitHarness(t, config.LimitsConfig{
		Plans:       map[string]config.LimitConfig{"free": plan(1, time.Minute), "pro": plan(3, time.Minute)},
		DefaultPlan: "free",
	}, func(c *config.Config) {
		c.Auth.APIKeys = []config.APIKeyConfig{{Key: "sha256:" + hex.EncodeToString(sum[:]), Subject: "partner", Roles: []string{"reader"}, Plan: "pro"}}
	})
	n := 0
	for range 5 {
		if h.do("GET", "/api/inventory/a", partnerKey, "").status == 200 {
			n++
		}
	}
	if n != 3 {
		t.Errorf("the pro key got %d requests, want 3 (its plan)", n)
	}
}

// TestRefusalMetrics: rate-limit refusals count by layer and failed
// authentication or authorisation by reason; every known layer and reason
// exists at 0 before any refusal.
func TestRefusalMetrics(t *testing.T) {
	h, _ := limitHarness(t, config.LimitsConfig{
		Groups: []config.LimitGroupConfig{{Name: "catalogue-reads", Routes: []string{"GET /api/inventory/{sku}"},
			Limit: plan(1, time.Minute)}},
	})
	want := map[string]float64{
		`portico_gateway_rate_limited_total{layer="catalogue-reads"}`:         0,
		`portico_gateway_rate_limited_total{layer="caller"}`:                  0,
		`portico_gateway_rate_limited_total{layer="ban"}`:                     0,
		`portico_gateway_auth_failures_total{reason="UNAUTHENTICATED"}`:       0,
		`portico_gateway_auth_failures_total{reason="MALFORMED_CREDENTIALS"}`: 0,
		`portico_gateway_auth_failures_total{reason="FORBIDDEN"}`:             0,
	}
	if diff := cmp.Diff(want, series(t, h.registry, want)); diff != "" {
		t.Fatalf("before any refusal (-want +got):\n%s", diff)
	}
	h.do("GET", "/api/inventory/a", aliceToken, "")
	for range 2 {
		if r := h.do("GET", "/api/inventory/a", aliceToken, ""); r.status != 429 {
			t.Fatalf("past the group's quota: %d %s", r.status, r.body)
		}
	}
	h.do("GET", "/api/orders", "", "")
	h.do("GET", "/api/orders", "wrong-token", "")
	h.do("GET", "/api/orders?access_token=x", "", "") // credentials in the query: malformed
	if r := h.do("PATCH", "/api/inventory/a", readerToken, `{"name":"A"}`); r.status != 403 {
		t.Fatalf("reader updating = %d %s, want 403", r.status, r.body)
	}
	want[`portico_gateway_rate_limited_total{layer="catalogue-reads"}`] = 2
	want[`portico_gateway_auth_failures_total{reason="UNAUTHENTICATED"}`] = 2
	want[`portico_gateway_auth_failures_total{reason="MALFORMED_CREDENTIALS"}`] = 1
	want[`portico_gateway_auth_failures_total{reason="FORBIDDEN"}`] = 1
	if diff := cmp.Diff(want, series(t, h.registry, want)); diff != "" {
		t.Errorf("after the refusals (-want +got):\n%s", diff)
	}
}

// series returns the value of each series named in want (as
// name{label="value",...}) that reg has.
func series(t *testing.T, reg prometheus.Gatherer, want map[string]float64) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
			}
			name := mf.GetName() + "{" + strings.Join(labels, ",") + "}"
			if _, ok := want[name]; ok {
				got[name] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return got
}

// TestReloadMovesNonces: a reload that points redis.url at a server moves
// the nonce store there without forgetting a nonce: one claimed in memory
// before the move is still a replay after it, both ways round.
func TestReloadMovesNonces(t *testing.T) {
	srv := redistest.Private(t)
	h, _ := limitHarness(t, config.LimitsConfig{})
	signed := func(nonce string) []string {
		return authtest.SignedHeaders(appSecret, "demo-app", "GET", "/api/inventory/a", "", nil, time.Now().Unix(), nonce)
	}
	get := func(nonce string) response { return h.do("GET", "/api/inventory/a", "", "", signed(nonce)...) }
	if r := get("nonce-before-move-1"); r.status != 200 {
		t.Fatalf("signed request: %d %s", r.status, r.body)
	}
	next := h.cfg
	next.Redis.URL = srv.URL
	if _, err := h.srv.Reload(t.Context(), next, SourceAdmin); err != nil {
		t.Fatalf("Reload(redis.url) = %v", err)
	}
	tests := []struct {
		name, nonce string
		want        int
	}{
		{"claimed before the move", "nonce-before-move-1", 401},
		{"fresh after the move", "nonce-after-move-01", 200},
		{"claimed after the move", "nonce-after-move-01", 401},
	}
	for _, tc := range tests {
		if r := get(tc.nonce); r.status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, r.status, r.body, tc.want)
		}
	}
	srv.Kill() // the new store is Redis: it now fails closed
	if r := get("nonce-after-kill-01"); r.status != 503 {
		t.Errorf("Redis down after the move: %d %s, want 503", r.status, r.body)
	}
}

// TestWriteLimitHeaders: the quota headers of one, two and three layers,
// admitted and refused, as fmt's %q and %d wrote them, under the keys
// http.Header.Set stores.
func TestWriteLimitHeaders(t *testing.T) {
	res := func(rate, remaining int, period, reset time.Duration) ratelimit.Result {
		return ratelimit.Result{Limit: ratelimit.Limit{Rate: rate, Period: period}, Remaining: remaining, ResetAfter: reset}
	}
	tests := []struct {
		name   string
		layers []string
		d      ratelimit.Decision
	}{
		{"one layer", []string{"caller"}, ratelimit.Decision{Allowed: true, Denied: -1,
			Results: [ratelimit.MaxQuotas]ratelimit.Result{res(12, 11, time.Second, 80*time.Millisecond)}}},
		{"three layers, the group tightest", []string{"caller", `order "writes"`, "global"}, ratelimit.Decision{Allowed: true, Denied: -1,
			Results: [ratelimit.MaxQuotas]ratelimit.Result{res(50, 40, time.Second, 0), res(100, 3, time.Minute, 1500*time.Millisecond), res(1_000_000, 999_999, time.Hour, time.Second)}}},
		{"refused by the second", []string{"caller", "global"}, ratelimit.Decision{Allowed: false, Denied: 1, RetryAfter: 2100 * time.Millisecond,
			Results: [ratelimit.MaxQuotas]ratelimit.Result{res(50, 0, time.Second, time.Second), res(2000, 7, time.Second, 10*time.Millisecond)}}},
		{"burst above rate: Limit is the burst", []string{"caller"}, ratelimit.Decision{Allowed: true, Denied: -1,
			Results: [ratelimit.MaxQuotas]ratelimit.Result{{Limit: ratelimit.Limit{Rate: 50, Period: time.Second, Burst: 100}, Remaining: 99, ResetAfter: 20 * time.Millisecond}}}},
		{"four layers, longer than the stack buffer", []string{"caller", strings.Repeat("a", 90), strings.Repeat("b", 90), "global"}, ratelimit.Decision{Allowed: true, Denied: -1,
			Results: [ratelimit.MaxQuotas]ratelimit.Result{res(50, 40, time.Second, 0), res(100, 3, time.Minute, time.Second), res(7, 6, time.Second, time.Second), res(1_000_000, 999_999, time.Hour, time.Second)}}},
	}
	tests = append(tests, struct {
		name   string
		layers []string
		d      ratelimit.Decision
	}{"a Redis outage failing open: no results", []string{"caller", "global"}, ratelimit.Decision{Allowed: true, Denied: -1}})
	// Each case is written three ways: members built once for the results'
	// limits (the limiter's path; a store's results carry the limit with
	// its defaults), members built for other limits (a result not matching
	// them, as the outage's), and none.
	for _, tt := range tests {
		for _, members := range []string{"members", "other members", "no members"} {
			t.Run(tt.name+"/"+members, func(t *testing.T) {
				d := tt.d
				lr := &limitRequest{}
				lr.req.Quotas = lr.quotas[:0]
				for i, l := range tt.layers {
					var m *policyMember
					switch lim := d.Results[i].Limit; {
					case members == "members" && lim.Rate > 0:
						m = newPolicyMember(l, lim)
						d.Results[i].Limit = m.limit
					case members == "other members":
						m = newPolicyMember(l, ratelimit.Limit{Rate: lim.Rate + 3, Period: lim.Period + time.Minute})
					}
					lr.add(l, ratelimit.Quota{}, m)
				}
				got := http.Header{}
				writeLimitHeaders(got, lr, &d)
				if diff := cmp.Diff(fmtLimitHeaders(lr, &d), got); diff != "" {
					t.Errorf("writeLimitHeaders() headers (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// fmtLimitHeaders is the fmt-built reference writeLimitHeaders replaced.
func fmtLimitHeaders(lr *limitRequest, d *ratelimit.Decision) http.Header {
	var policy, state strings.Builder
	tightest := 0
	for i := range lr.req.Quotas {
		res := d.Results[i]
		t := ceilSeconds(res.ResetAfter)
		if i == d.Denied {
			t = ceilSeconds(d.RetryAfter)
		}
		if i > 0 {
			policy.WriteString(", ")
			state.WriteString(", ")
		}
		fmt.Fprintf(&policy, "%q;q=%d;w=%d", lr.layers[i], capacity(res.Limit), ceilSeconds(res.Limit.Period))
		fmt.Fprintf(&state, "%q;r=%d;t=%d", lr.layers[i], res.Remaining, t)
		if res.Remaining < d.Results[tightest].Remaining {
			tightest = i
		}
	}
	if d.Denied >= 0 {
		tightest = d.Denied
	}
	remaining := d.Results[tightest].Remaining
	if !d.Allowed {
		remaining = 0
	}
	h := http.Header{}
	h.Set("RateLimit-Policy", policy.String())
	h.Set("RateLimit", state.String())
	h.Set("X-RateLimit-Limit", strconv.Itoa(capacity(d.Results[tightest].Limit)))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	return h
}

// BenchmarkWriteLimitHeaders: the quota headers of the production shape's
// two layers (caller, global), as written now and by the fmt reference.
func BenchmarkWriteLimitHeaders(b *testing.B) {
	lr := &limitRequest{}
	lr.req.Quotas = lr.quotas[:0]
	lim := ratelimit.Limit{Rate: 1_000_000, Period: time.Second, Burst: 1_000_000}
	lr.add(layerCaller, ratelimit.Quota{}, newPolicyMember(layerCaller, lim))
	lr.add(layerGlobal, ratelimit.Quota{}, newPolicyMember(layerGlobal, lim))
	d := ratelimit.Decision{Allowed: true, Denied: -1, Results: [ratelimit.MaxQuotas]ratelimit.Result{
		{Limit: lim, Remaining: 999_998, ResetAfter: time.Microsecond},
		{Limit: lim, Remaining: 999_990, ResetAfter: 9 * time.Microsecond},
	}}
	for _, bc := range []struct {
		name  string
		write func(http.Header)
	}{
		{"append", func(h http.Header) { writeLimitHeaders(h, lr, &d) }},
		{"fmt", func(h http.Header) { _ = fmtLimitHeaders(lr, &d) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.write(http.Header{})
			}
		})
	}
}

// TestLimiterRefusedKeepsNoReference: a config whose limit group selects no
// route (a reload removed a loaded service) is refused without taking a
// reference on the previous limiter's shared Redis backend, so the
// backend closes when the previous limiter does.
func TestLimiterRefusedKeepsNoReference(t *testing.T) {
	url, _, prefix := redistest.Shared(t)
	cfg := config.Dev(0)
	cfg.Redis.URL = url
	cfg.Limits = config.LimitsConfig{Plans: map[string]config.LimitConfig{"default": plan(5, time.Minute)}, DefaultPlan: "default",
		Redis:  config.LimitsRedisConfig{Prefix: prefix, Timeout: time.Second},
		Groups: []config.LimitGroupConfig{{Name: "things", Routes: []string{"GET /v1/things"}, Limit: plan(1, 0)}}}
	things := []*route.Route{{Method: "GET", Pattern: "/v1/things", RPC: "/odd.v1.OddService/ListThings"}}
	l1, err := newLimiter(cfg, things, slog.New(slog.DiscardHandler), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newLimiter(cfg, nil, slog.New(slog.DiscardHandler), nil, l1, nil); err == nil {
		t.Fatal("newLimiter with a group selecting no route = nil error")
	}
	if err := l1.close(); err != nil {
		t.Fatal(err)
	}
	if err := l1.redis.Ping(context.Background()).Err(); !errors.Is(err, redis.ErrClosed) {
		t.Errorf("after the only limiter closed, its Redis client answers %v, want %v", err, redis.ErrClosed)
	}
}

// TestRateLimitPolicyQuota: with burst above rate, RateLimit-Policy's q is
// the burst, so RateLimit's r never exceeds it, on 200s and on the 429.
func TestRateLimitPolicyQuota(t *testing.T) {
	h, _ := limitHarness(t, config.LimitsConfig{
		Plans:       map[string]config.LimitConfig{"default": {Rate: 2, Burst: 4, Period: time.Minute}},
		DefaultPlan: "default",
	})
	for i := range 5 {
		r := h.do("GET", "/api/inventory/a", readerToken, "")
		want := 200
		if i == 4 {
			want = 429
		}
		policy, state := r.header.Get("RateLimit-Policy"), r.header.Get("RateLimit")
		if r.status != want || policy != `"caller";q=4;w=60` || !strings.HasPrefix(state, fmt.Sprintf(`"caller";r=%d;`, max(3-i, 0))) {
			t.Errorf("request %d = %d, RateLimit-Policy %q, RateLimit %q; want %d, q=4, r=%d", i+1, r.status, policy, state, want, max(3-i, 0))
		}
	}
}
