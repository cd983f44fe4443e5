package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/internal/redistest"
)

// redisHealthHarness is an edge with rate limits and nonces in the Redis
// at url (outage policy outage), and a channel of its Redis probes' PINGs.
func redisHealthHarness(t *testing.T, url, outage string) (*harness, chan bool) {
	t.Helper()
	probed := make(chan bool, 16)
	h := newHarness(t, setup{
		cfg: func(c *config.Config) {
			c.Redis.URL = url
			c.Limits = config.LimitsConfig{Global: &config.LimitConfig{Rate: 1000, Period: time.Second}}
			c.Limits.Redis.Outage = outage
		},
		opts: []Option{func(o *options) {
			o.redisProbed = func(up bool) {
				select {
				case probed <- up:
				default:
				}
			}
		}},
	})
	okStubs(h)
	return h, probed
}

// healthOf returns /health's status code, status, redis dependency and
// nonces status.
func healthOf(t *testing.T, h *harness) (code int, status, redis, nonces string) {
	t.Helper()
	r := h.do("GET", "/health", "", "")
	m := r.json(t)
	for _, d := range m["dependencies"].([]any) {
		if d := d.(map[string]any); d["name"] == "redis" {
			redis = d["status"].(string)
		}
	}
	if n, ok := m["nonces"].(map[string]any); ok {
		nonces = n["status"].(string)
		if nonces != "UP" && !strings.Contains(n["detail"].(string), "signed requests are refused") {
			t.Errorf("nonces' detail %q does not say what the edge does", n["detail"])
		}
	}
	return r.status, m["status"].(string), redis, nonces
}

// TestHealthProbesRedis: /health follows Redis through the edge's own
// PINGs, with no traffic at all: a Redis killed is DOWN (rate limits and
// nonces) and the edge DEGRADED with 200, as it still serves (limits fail
// open), or 503 when the outage policy refuses every request; readiness
// stays green.
func TestHealthProbesRedis(t *testing.T) {
	tests := []struct {
		outage   string
		downCode int
	}{
		{"local", 200},
		{"closed", 503},
	}
	for _, tc := range tests {
		t.Run(tc.outage, func(t *testing.T) {
			srv := redistest.Private(t)
			h, probed := redisHealthHarness(t, srv.URL, tc.outage)
			if code, status, redis, nonces := healthOf(t, h); code != 200 || status != "UP" || redis != "UP" || nonces != "UP" {
				t.Fatalf("Redis up: /health %d %s, redis %s, nonces %s; want 200 UP, UP, UP", code, status, redis, nonces)
			}
			if v := testutil.ToFloat64(redisGauge{h.srv}); v != 0 {
				t.Errorf("Redis up: portico_gateway_ratelimit_redis_degraded = %v, want 0", v)
			}
			srv.Kill()
			deadline := time.After(10 * time.Second)
			for {
				select {
				case <-probed:
				case <-deadline:
					t.Fatal("Redis killed: /health never reported it DOWN")
				}
				if _, _, redis, nonces := healthOf(t, h); redis == "DOWN" && nonces == "DOWN" {
					break
				}
			}
			if code, status, _, _ := healthOf(t, h); code != tc.downCode || status != "DEGRADED" {
				t.Errorf("Redis down: /health %d %s; want %d DEGRADED", code, status, tc.downCode)
			}
			// The alert's gauge says so too, with no request having
			// failed there (an idle edge; found by the operator review).
			if v := testutil.ToFloat64(redisGauge{h.srv}); v != 1 {
				t.Errorf("Redis down, no traffic: portico_gateway_ratelimit_redis_degraded = %v, want 1", v)
			}
			h.srv.serving.Store(true) // as Serve does
			if r := h.do("GET", "/healthz/ready", "", ""); r.status != 200 {
				t.Errorf("Redis down: /healthz/ready %d %s; want 200", r.status, r.body)
			}
		})
	}
}

// TestHealthRedisDownAtStart: an edge started with a Redis nobody answers
// at reports it DOWN at once (the first PING runs at start), before any
// request, and logs it.
func TestHealthRedisDownAtStart(t *testing.T) {
	h, _ := redisHealthHarness(t, "redis://"+closedAddr(t)+"/0", "local")
	if code, status, redis, nonces := healthOf(t, h); code != 200 || status != "DEGRADED" || redis != "DOWN" || nonces != "DOWN" {
		t.Errorf("Redis down at start: /health %d %s, redis %s, nonces %s; want 200 DEGRADED, DOWN, DOWN", code, status, redis, nonces)
	}
	for _, msg := range []string{
		"rate limits: Redis does not answer PING; deciding by the outage policy while requests fail there",
		"nonces: Redis does not answer PING; signed requests are refused (fail closed) while it does not",
	} {
		if len(h.logs.lines(t, msg)) != 1 {
			t.Errorf("no log line %q", msg)
		}
	}
}
