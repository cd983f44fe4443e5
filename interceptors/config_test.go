package interceptors_test

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/breaker"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestConfigValidateGolden(t *testing.T) {
	ok := interceptors.Config{Name: "inventory", Target: "dns:///inventory:43101"}
	tests := []struct {
		name string
		edit func(*interceptors.Config)
	}{
		{"valid zero values", func(*interceptors.Config) {}},
		{"defaults spelled out", func(c *interceptors.Config) {
			d := interceptors.Defaults()
			d.Name, d.Target = c.Name, c.Target
			*c = d
		}},
		{"no target", func(c *interceptors.Config) { c.Target = "" }},
		{"target and addresses", func(c *interceptors.Config) { c.Addresses = []string{"10.0.0.7:1"} }},
		{"addresses without a name", func(c *interceptors.Config) { c.Target, c.Name, c.Addresses = "", "", []string{"10.0.0.7:1", ""} }},
		{"negative timeouts", func(c *interceptors.Config) {
			c.Timeout, c.MinBudget, c.Retry.AttemptTimeout = -time.Second, -time.Millisecond, -time.Millisecond
		}},
		{"bad method timeouts", func(c *interceptors.Config) {
			c.MethodTimeouts = map[string]time.Duration{"CreateOrder": time.Second, "/portico.order.v1.OrderService/GetOrder": 0}
		}},
		{"max attempts below 1", func(c *interceptors.Config) { c.Retry.MaxAttempts = -1 }},
		{"retry budget out of range", func(c *interceptors.Config) { c.Retry.BudgetRatio, c.Retry.BudgetWindow = 1.5, -time.Second }},
		{"breaker that can never open", func(c *interceptors.Config) { c.Breaker.ConsecutiveFailures, c.Breaker.FailureRate = -1, -1 }},
		{"breaker out of range", func(c *interceptors.Config) {
			c.Breaker.FailureRate, c.Breaker.MinCalls, c.Breaker.CoolDown, c.Breaker.HalfOpenProbes = 2, -1, -time.Second, -1
		}},
		{"features off by default turned on negative", func(c *interceptors.Config) {
			c.Retry.AttemptTimeout, c.Breaker.SlowCallThreshold = -time.Millisecond, -time.Millisecond
		}},
		{"bulkhead negative", func(c *interceptors.Config) { c.Bulkhead.MaxInFlight, c.Bulkhead.MaxWait = -1, -time.Millisecond }},
		{"unknown balancer", func(c *interceptors.Config) { c.Balancer = "random" }},
		{"ejection out of range", func(c *interceptors.Config) { c.Ejection.MaxPercent, c.Ejection.BaseTime = 120, -time.Second }},
	}
	var out strings.Builder
	for _, tt := range tests {
		c := ok
		tt.edit(&c)
		fmt.Fprintf(&out, "== %s\n", tt.name)
		err := c.Validate()
		if err == nil {
			out.WriteString("ok\n")
			continue
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(&out, "%s\n", line)
		}
		var fe *interceptors.FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: Validate() = %v, want *FieldError values", tt.name, err)
		}
	}
	golden(t, "validate.golden", out.String())
}

// TestOptionsNameTheField: an option is validated as the Config field it
// sets, and a bad value names that field.
func TestOptionsNameTheField(t *testing.T) {
	tests := []struct {
		opt   interceptors.Option
		field string
	}{
		{interceptors.WithMaxAttempts(-1), "retry.max_attempts"},
		{interceptors.WithAttemptTimeout(-time.Second), "retry.attempt_timeout"},
		{interceptors.WithBulkhead(-1, 10, time.Millisecond), "bulkhead.max_in_flight"},
		{interceptors.WithBulkhead(4, 10, -time.Millisecond), "bulkhead.max_wait"},
		{interceptors.WithRetryBudget(1.5, time.Second, 1), "retry.budget_ratio"},
		{interceptors.WithRetryBudget(0.1, -time.Second, 1), "retry.budget_window"},
		{interceptors.WithRetryBudget(0.1, time.Second, math.NaN()), "retry.budget_min_per_second"},
		{interceptors.WithRetryBudget(0.1, time.Second, math.Inf(1)), "retry.budget_min_per_second"},
		{interceptors.WithBreaker(breaker.Settings{CoolDown: -1}), "breaker"},
		{interceptors.WithBalancer("random"), "balancer"},
		{interceptors.WithMinBudget(-time.Millisecond), "min_budget"},
	}
	for _, tt := range tests {
		_, err := interceptors.Dial("dns:///inventory:43101", tt.opt)
		var fe *interceptors.FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("Dial with a bad %s = %v, want a *FieldError for %q", tt.field, err, tt.field)
		}
	}
}

func TestConfigFromYAML(t *testing.T) {
	doc := `
name: order
target: dns:///order:43103
timeout: 240ms
method_timeouts:
  /portico.order.v1.OrderService/CreateOrder: 2s
min_budget: 10ms
retry:
  max_attempts: 2
  budget_ratio: 0.1
breaker:
  consecutive_failures: 2
  cool_down: 800ms
  half_open_probes: 1
  slow_call_threshold: 200ms
  methods: [/portico.order.v1.OrderService/CreateOrder]
bulkhead: {max_in_flight: 64, queue: 8, max_wait: 20ms}
balancer: least_request
health_check: {enabled: true, service: portico.order.v1.OrderService}
`
	var got interceptors.Config
	if err := yaml.Unmarshal([]byte(doc), &got); err != nil {
		t.Fatal(err)
	}
	want := interceptors.Config{
		Name: "order", Target: "dns:///order:43103", Timeout: 240 * time.Millisecond,
		MethodTimeouts: map[string]time.Duration{"/portico.order.v1.OrderService/CreateOrder": 2 * time.Second},
		MinBudget:      10 * time.Millisecond,
		Retry:          interceptors.RetryConfig{MaxAttempts: 2, BudgetRatio: 0.1},
		Breaker: interceptors.BreakerConfig{
			ConsecutiveFailures: 2, CoolDown: 800 * time.Millisecond, HalfOpenProbes: 1,
			SlowCallThreshold: 200 * time.Millisecond, Methods: []string{"/portico.order.v1.OrderService/CreateOrder"},
		},
		Bulkhead:    interceptors.BulkheadConfig{MaxInFlight: 64, Queue: 8, MaxWait: 20 * time.Millisecond},
		Balancer:    "least_request",
		HealthCheck: interceptors.HealthCheckConfig{Enabled: new(true), Service: "portico.order.v1.OrderService"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("YAML config mismatch (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	conn, err := interceptors.Dial("", interceptors.WithConfig(got))
	if err != nil {
		t.Fatalf("Dial(WithConfig(cfg)) = %v", err)
	}
	conn.Close()
}

// TestDefaults pins the documented defaults a deployment relies on: a
// service's call to another gets DefaultTimeout (1s), and a breaker opens
// after 2 consecutive failures for 800ms with one half-open probe.
func TestDefaults(t *testing.T) {
	d := interceptors.Defaults()
	if d.Timeout != time.Second || d.Breaker.ConsecutiveFailures != 2 || d.Breaker.CoolDown != 800*time.Millisecond || d.Breaker.HalfOpenProbes != 1 {
		t.Errorf("Defaults() = timeout %v, breaker %d failures / %v cool-down / %d probes; want 1s, 2 / 800ms / 1",
			d.Timeout, d.Breaker.ConsecutiveFailures, d.Breaker.CoolDown, d.Breaker.HalfOpenProbes)
	}
}
