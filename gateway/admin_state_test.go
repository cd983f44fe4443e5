package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/internal/redistest"
)

// adminGet GETs path from an admin handler's server with the admin token
// and decodes the JSON answer into v.
func adminGet(t *testing.T, admin *httptest.Server, path string, v any) {
	t.Helper()
	resp, b := consoleGet(t, admin, path, adminToken)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", path, resp.StatusCode, b)
	}
	if err := json.Unmarshal([]byte(b), v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, b)
	}
}

// getAsync sends GET path to api with token and returns the status on the
// channel when it is answered.
func getAsync(t *testing.T, api *httptest.Server, path, token string) <-chan int {
	done := make(chan int, 1)
	req, err := http.NewRequestWithContext(t.Context(), "GET", api.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	go func() {
		resp, err := api.Client().Do(req)
		if err != nil {
			done <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	return done
}

// holder makes GetItem wait until released, telling on entered the
// address of the instance (the server's own) that holds it.
type holder struct {
	entered chan string
	release chan struct{}
}

func newHolder(h *harness) *holder {
	ho := &holder{entered: make(chan string, 1), release: make(chan struct{})}
	h.inv.getItem = func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		p, _ := peer.FromContext(ctx)
		ho.entered <- p.LocalAddr.String()
		<-ho.release
		return &inventoryv1.Item{Sku: "a"}, nil
	}
	return ho
}

// wait returns the holding instance's address, within 10s.
func (ho *holder) wait(t *testing.T) string {
	t.Helper()
	select {
	case addr := <-ho.entered:
		return addr
	case <-time.After(10 * time.Second):
		t.Fatal("the held call never reached an instance")
	}
	return ""
}

func upstreamNamed(t *testing.T, ups []UpstreamInfo, name string) UpstreamInfo {
	t.Helper()
	for _, u := range ups {
		if u.Name == name {
			return u
		}
	}
	t.Fatalf("/admin/upstreams lacks %s", name)
	return UpstreamInfo{}
}

// twoInventories gives inventory a second instance and returns its server.
// Checks get 5s: a loaded machine must not make a live instance DOWN (a
// stopped one fails at once, its port refusing).
func twoInventories(h *harness) *grpc.Server {
	h.cfg.Health.Timeout = 5 * time.Second
	for i, up := range h.cfg.Upstreams {
		if up.Name == "inventory" {
			h.cfg.Upstreams[i].Addresses = append(up.Addresses, h.startUpstream(up, nil))
		}
	}
	return h.servers["inventory"]
}

// TestAdminInstanceHealth: of two instances, the stopped one is DOWN and
// the other UP, each checked on its own.
func TestAdminInstanceHealth(t *testing.T) {
	var second *grpc.Server
	a := newAdminHarness(t, func(h *harness) { second = twoInventories(h) })
	second.Stop()
	var got struct{ Upstreams []UpstreamInfo }
	adminGet(t, a.admin, "/admin/upstreams", &got)
	inv := upstreamNamed(t, got.Upstreams, "inventory")
	if len(inv.Instances) != 2 || inv.Instances[0].Health != "UP" || inv.Instances[1].Health != "DOWN" ||
		inv.Instances[1].Addr != inv.Addresses[1] {
		t.Errorf("inventory instances = %+v, want %s UP and %s (stopped) DOWN", inv.Instances, inv.Addresses[0], inv.Addresses[1])
	}
	if o := upstreamNamed(t, got.Upstreams, "order"); len(o.Instances) != 1 || o.Instances[0].Health != "UP" {
		t.Errorf("order instances = %+v, want one UP", o.Instances)
	}
}

// TestAdminInstanceInFlight: a call held by one instance counts 1 there
// and 0 on the other, and 0 everywhere once answered.
func TestAdminInstanceInFlight(t *testing.T) {
	var ho *holder
	a := newAdminHarness(t, func(h *harness) { twoInventories(h); ho = newHolder(h) })
	done := getAsync(t, a.api, "/api/inventory/a", readerToken)
	held := ho.wait(t)
	inFlight := func() map[string]int64 {
		var got struct{ Upstreams []UpstreamInfo }
		adminGet(t, a.admin, "/admin/upstreams", &got)
		out := map[string]int64{}
		for _, in := range upstreamNamed(t, got.Upstreams, "inventory").Instances {
			if in.InFlight == nil {
				t.Fatalf("instance %s has no inFlight", in.Addr)
			}
			out[in.Addr] = *in.InFlight
		}
		return out
	}
	got := inFlight()
	for addr, n := range got {
		if want := map[bool]int64{true: 1, false: 0}[addr == held]; n != want {
			t.Errorf("inFlight of %s = %d, want %d (the call is held at %s)", addr, n, want, held)
		}
	}
	if len(got) != 2 {
		t.Errorf("inventory instances = %v, want two", got)
	}
	close(ho.release)
	if code := <-done; code != 200 {
		t.Fatalf("held GET = %d, want 200", code)
	}
	for addr, n := range inFlight() {
		if n != 0 {
			t.Errorf("inFlight of %s after the answer = %d, want 0", addr, n)
		}
	}
}

// limitsAdmin is an edge with every limit layer, bans after one refusal and
// an edge cap of one request in flight, and its admin API.
func limitsAdmin(t *testing.T, more ...func(*config.Config)) (*harness, *frozenClock, *httptest.Server) {
	h, clock := limitHarness(t, config.LimitsConfig{
		Plans:       map[string]config.LimitConfig{"default": plan(1, time.Minute), "gold": {Rate: 10, Burst: 20}},
		DefaultPlan: "default",
		RolePlans:   map[string]string{"admin": "gold"},
		Groups:      []config.LimitGroupConfig{{Name: "reads", Routes: []string{"GET /api/inventory/{sku}"}, Limit: plan(100, time.Second)}},
		Global:      &config.LimitConfig{Rate: 1000},
		FailedAuth:  &config.LimitConfig{Rate: 5, Period: time.Minute},
		Bans:        &config.BanConfig{Threshold: 1, Window: time.Minute, Duration: time.Hour},
	}, append(more, func(c *config.Config) { c.Shed = config.ShedConfig{MaxInFlight: 1} })...)
	admin := httptest.NewServer(h.srv.AdminHandler())
	t.Cleanup(admin.Close)
	return h, clock, admin
}

// banAlice gets alice banned: admitted, refused, banned.
func banAlice(t *testing.T, h *harness) {
	t.Helper()
	for i, want := range []int{200, 429, 429} {
		if r := h.do("GET", "/api/inventory/a", aliceToken, ""); r.status != want {
			t.Fatalf("alice's request %d = %d %s, want %d", i+1, r.status, r.body, want)
		}
	}
}

// TestAdminLimits: /admin/limits shows every layer as configured, a ban
// once imposed (with its end), and an in-flight cap's holders and
// refusals.
func TestAdminLimits(t *testing.T) {
	h, clock, admin := limitsAdmin(t)
	var got LimitsInfo
	adminGet(t, admin, "/admin/limits", &got)
	rl := got.RateLimits
	if rl == nil {
		t.Fatal("/admin/limits has no rateLimits")
	}
	layers, _ := json.Marshal(map[string]any{"caller": rl.Caller, "groups": rl.Groups, "global": rl.Global, "failedAuth": rl.FailedAuth, "policy": rl.Bans.Policy})
	want := `{"caller":{"plans":{"default":{"rate":1,"period":"1m0s","burst":1},"gold":{"rate":10,"period":"1s","burst":20}},"defaultPlan":"default","rolePlans":{"admin":"gold"},"subjectPlans":0},` +
		`"failedAuth":{"rate":5,"period":"1m0s","burst":5},"global":{"rate":1000,"period":"1s","burst":1000},` +
		`"groups":[{"name":"reads","routes":["GET /api/inventory/{sku}"],"rate":100,"period":"1s","burst":100}],` +
		`"policy":{"threshold":1,"window":"1m0s","duration":"1h0m0s"}}`
	if string(layers) != want {
		t.Errorf("layers = %s\nwant %s", layers, want)
	}
	if rl.Backend != "local" || rl.Redis != nil || len(rl.Bans.Active) != 0 || rl.Bans.Source != "local" {
		t.Errorf("rateLimits = %+v, want a local backend and no bans", rl)
	}

	banAlice(t, h)
	adminGet(t, admin, "/admin/limits", &got)
	bans := got.RateLimits.Bans
	if len(bans.Active) != 1 || bans.More || bans.Active[0].Caller != "subject:alice" || !bans.Active[0].Until.Equal(clock.Now().Add(time.Hour)) {
		t.Errorf("bans = %+v, want alice's until %s", bans, clock.Now().Add(time.Hour))
	}

	ho := newHolder(h)
	done := getAsync(t, h.http, "/api/inventory/a", bobToken)
	ho.wait(t)
	if r := h.do("GET", "/api/inventory/a", readerToken, ""); r.status != 503 {
		t.Errorf("a second request with one slot held = %d %s, want 503", r.status, r.body)
	}
	adminGet(t, admin, "/admin/limits", &got)
	wantShed := []ShedScopeInfo{{Name: "edge", MaxInFlight: 1, InFlight: 1, Shed: 1}}
	if s := got.Shedding.Scopes; len(s) != 1 || s[0] != wantShed[0] {
		t.Errorf("shedding scopes = %+v, want %+v", s, wantShed)
	}
	close(ho.release)
	if code := <-done; code != 200 {
		t.Errorf("bob's held request = %d, want 200", code)
	}
}

// TestAdminLimitsRedis: with Redis the backend, its health and the bans
// come from Redis.
func TestAdminLimitsRedis(t *testing.T) {
	url, _, prefix := redistest.Shared(t)
	h, _, admin := limitsAdmin(t, func(c *config.Config) {
		c.Redis.URL = url
		c.Limits.Redis = config.LimitsRedisConfig{Prefix: prefix, Timeout: time.Second}
	})
	banAlice(t, h)
	var got LimitsInfo
	adminGet(t, admin, "/admin/limits", &got)
	rl := got.RateLimits
	if rl == nil || rl.Backend != "redis" || rl.Redis == nil || *rl.Redis != (RedisLimitInfo{Status: "UP", Outage: "local", Prefix: prefix, Timeout: "1s"}) {
		t.Fatalf("rateLimits = %+v, want a healthy Redis backend", rl)
	}
	if b := rl.Bans; b.Source != "redis" || len(b.Active) != 1 || b.Active[0].Caller != "subject:alice" || time.Until(b.Active[0].Until) < 59*time.Minute {
		t.Errorf("bans = %+v, want alice's from Redis, about 1h left", b)
	}
}

// TestAdminLimitsRedisDown: with nothing listening at the Redis URL,
// /admin/limits says Redis is DOWN from the start (the probe's first PING,
// before any request), and the bans are this edge's copy, saying why.
func TestAdminLimitsRedisDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, _, admin := limitsAdmin(t, func(c *config.Config) {
		c.Redis.URL = "redis://" + addr
		c.Limits.Redis = config.LimitsRedisConfig{Timeout: 200 * time.Millisecond}
	})
	var got LimitsInfo
	adminGet(t, admin, "/admin/limits", &got)
	rl := got.RateLimits
	if rl == nil || rl.Backend != "redis" || rl.Redis == nil || rl.Redis.Status != "DOWN" {
		t.Fatalf("rateLimits = %+v, want a Redis backend DOWN before any request", rl)
	}
	if b := rl.Bans; b.Source != "local" || b.Error == "" {
		t.Errorf("bans = %+v, want this edge's copy and why", b)
	}
}

// BenchmarkGetItemChain is BenchmarkGetItem through the real client chain
// (WithUpstreams), whose connection counts calls per instance.
func BenchmarkGetItemChain(b *testing.B) {
	h := newHarness(b, setup{})
	h.inv.getItem = benchKeyboard
	ups := NewUpstreams(interceptors.WithLogger(discardLogger()))
	srv, err := New(context.Background(), h.cfg, WithUpstreams(ups), WithLogger(discardLogger()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close(); ups.Close() })
	handler := srv.Handler()
	benchGetItem(b, handler, http.StatusOK)
}

// TestAdminLimitsMaxQueue: maxQueue is the bound the edge applies: the
// default 64 once requests may wait, 0 while nobody waits (max_wait 0, the
// default, or max_queue -1).
func TestAdminLimitsMaxQueue(t *testing.T) {
	for _, tt := range []struct {
		name  string
		shed  config.ShedConfig
		queue int
	}{
		{"defaults", config.ShedConfig{}, 0},
		{"max_wait", config.ShedConfig{MaxWait: time.Second}, config.DefaultShedQueue},
		{"max_queue", config.ShedConfig{MaxWait: time.Second, MaxQueue: 10}, 10},
		{"max_queue -1", config.ShedConfig{MaxWait: time.Second, MaxQueue: -1}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := limitHarness(t, config.LimitsConfig{}, func(c *config.Config) { c.Shed = tt.shed })
			admin := httptest.NewServer(h.srv.AdminHandler())
			t.Cleanup(admin.Close)
			var got LimitsInfo
			adminGet(t, admin, "/admin/limits", &got)
			if got.Shedding.MaxQueue != tt.queue {
				t.Errorf("maxQueue = %d, want %d", got.Shedding.MaxQueue, tt.queue)
			}
		})
	}
}

// TestAdminLimitsPerCaller: the per-caller in-flight cap shows in
// /admin/limits (its cap, holders, largest holding and refusals since
// start) and its 429 TOO_MANY_IN_FLIGHT in /admin/traffic's limited.
func TestAdminLimitsPerCaller(t *testing.T) {
	h, _ := limitHarness(t, config.LimitsConfig{}, func(c *config.Config) {
		c.Shed = config.ShedConfig{MaxInFlight: 10, MaxInFlightPerClient: 3, MaxInFlightPerCaller: 1}
	})
	admin := httptest.NewServer(h.srv.AdminHandler())
	t.Cleanup(admin.Close)
	h.srv.trend.Sample(time.Now()) // the window's first sample: refusals count from here

	ho := newHolder(h)
	done := getAsync(t, h.http, "/api/inventory/a", bobToken)
	ho.wait(t)
	if r := h.do("GET", "/api/inventory/a", bobToken, ""); r.status != 429 || !strings.Contains(string(r.body), "TOO_MANY_IN_FLIGHT") {
		t.Errorf("bob's second request with his slot held = %d %s, want 429 TOO_MANY_IN_FLIGHT", r.status, r.body)
	}
	var got LimitsInfo
	adminGet(t, admin, "/admin/limits", &got)
	want := []ShedKeyInfo{
		{Name: "client", Setting: "shed.max_in_flight_per_client", MaxInFlight: 3},
		{Name: "caller", Setting: "shed.max_in_flight_per_caller", MaxInFlight: 1, Holders: 1, Largest: 1, Refused: 1},
	}
	if !slices.Equal(got.Shedding.PerKey, want) {
		t.Errorf("shedding.perKey = %+v, want %+v", got.Shedding.PerKey, want)
	}
	var traffic struct{ Limited map[string]float64 }
	adminGet(t, admin, "/admin/traffic", &traffic)
	if n := traffic.Limited["in_flight_per_caller"]; n != 1 {
		t.Errorf("/admin/traffic limited = %v, want in_flight_per_caller 1", traffic.Limited)
	}
	close(ho.release)
	if code := <-done; code != 200 {
		t.Errorf("bob's held request = %d, want 200", code)
	}
	adminGet(t, admin, "/admin/limits", &got)
	if c := got.Shedding.PerKey[1]; c.Holders != 0 || c.Largest != 0 {
		t.Errorf("caller cap once answered = %+v, want no holders", c)
	}
}
