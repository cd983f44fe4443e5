package gateway

import (
	"strconv"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/config"
)

// TestXRateLimitCountsDownFromLimit: X-RateLimit-Limit is the capacity
// X-RateLimit-Remaining counts down from (the bucket's burst), as GitHub's,
// Kong's and Envoy's X-RateLimit-* mean it: a fresh caller reads Limit N,
// Remaining N-1, and Remaining never exceeds Limit. It was the rate (dev:
// Limit 50 beside Remaining 99).
func TestXRateLimitCountsDownFromLimit(t *testing.T) {
	tests := []struct {
		name   string
		limits config.LimitsConfig
		limit  int // the capacity the headers should name
	}{
		{"burst above rate", config.LimitsConfig{Plans: map[string]config.LimitConfig{"p": {Rate: 5, Period: time.Second, Burst: 8}}, DefaultPlan: "p"}, 8},
		{"burst defaults to rate", config.LimitsConfig{Plans: map[string]config.LimitConfig{"p": {Rate: 6, Period: time.Minute}}, DefaultPlan: "p"}, 6},
		{"the tightest layer is global", config.LimitsConfig{Plans: map[string]config.LimitConfig{"p": {Rate: 50, Burst: 100}}, DefaultPlan: "p",
			Global: &config.LimitConfig{Rate: 2, Period: time.Second, Burst: 4}}, 4},
		{"dev limits", config.DevLimits(), config.DevLimits().Plans[config.DevLimits().DefaultPlan].Burst},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := limitHarness(t, tt.limits)
			for i := range min(tt.limit, 12) + 1 {
				r := h.do("GET", "/api/inventory/a", aliceToken, "")
				want := max(tt.limit-1-i, 0)
				lim, rem := r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Remaining")
				if lim != strconv.Itoa(tt.limit) || rem != strconv.Itoa(want) {
					t.Fatalf("request %d (%d): X-RateLimit-Limit %q, -Remaining %q; want %d and %d", i+1, r.status, lim, rem, tt.limit, want)
				}
				wantStatus := 200
				if i >= tt.limit {
					wantStatus = 429
				}
				if r.status != wantStatus {
					t.Fatalf("request %d: %d, want %d", i+1, r.status, wantStatus)
				}
			}
		})
	}
}
