package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/interceptors"
)

// resilienceDoc is a valid config whose order upstream takes block as its
// resilience (line 4 of the document).
func resilienceDoc(block string) []byte {
	return []byte(`upstreams:
  - {name: inventory, addresses: [127.0.0.1:1]}
  - {name: payment, addresses: [127.0.0.1:2]}
  - {name: order, addresses: [127.0.0.1:3], resilience: ` + block + `}
`)
}

func TestResilienceConfig(t *testing.T) {
	tests := []struct {
		name    string
		block   string
		wantErr string // substring; "" means the document is valid
	}{
		{"empty block", "{}", ""},
		{"unknown key names path and line", "{breakr: {}}", "upstreams[2].resilience.breakr: unknown field (line 4)"},
		{"wrong type names path and line", "{retry: {max_attempts: many}}", "upstreams[2].resilience.retry.max_attempts"},
		{"fraction of an attempt", "{retry: {max_attempts: 1.5}}", "upstreams[2].resilience.retry.max_attempts"},
		{"zero attempts means the default", "{retry: {max_attempts: 0}}", ""},
		{"zero threshold means the default", "{breaker: {consecutive_failures: 0}}", ""},
		{"zero cool-down in any spelling means the default", "{breaker: {cool_down: 0ms}}", ""},
		{"zero ratio means the default", "{retry: {budget_ratio: 0.0}}", ""},
		{"zero attempt timeout means none", "{retry: {attempt_timeout: 0s}}", ""},
		{"negative attempts", "{retry: {max_attempts: -1}}", "upstreams[2].resilience.retry.max_attempts: must be at least 1"},
		{"breaker that can never open", "{breaker: {consecutive_failures: -1, failure_rate: -1}}", "upstreams[2].resilience.breaker.consecutive_failures: both rules off"},
		{"negative probes", "{breaker: {half_open_probes: -1}}", "upstreams[2].resilience.breaker.half_open_probes"},
		{"ratio above one", "{retry: {budget_ratio: 1.5}}", "upstreams[2].resilience.retry.budget_ratio"},
		{"dns refresh too fast", "{dns_refresh: 1ns}", "upstreams[2].resilience.dns_refresh: must be at least 1s"},
		{"dns refresh off", "{dns_refresh: -1s}", ""},
		{"unknown balancer", "{balancer: random}", "upstreams[2].resilience.balancer"},
		{"a service named 0 is a name", `{health_check: {enabled: true, service: "0"}}`, ""},
		{"an older config's chain timeout still loads", "{timeout: 2s}", ""},
		{"an older config's method timeouts still load", "{method_timeouts: {/a.B/C: 1s}}", ""},
		{"method timeout must be positive", "{method_timeouts: {/a.B/C: -1s}}", "upstreams[2].resilience.method_timeouts"},
		{"addresses belong to the upstream", "{addresses: [a:1]}", "name, target and addresses come from the upstream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse(resilienceDoc(tt.block), CheckRoutes)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("config.Parse = %v, want it valid", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("config.Parse = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestUpstreamChain(t *testing.T) {
	tests := []struct {
		name string
		up   config.UpstreamConfig
		want interceptors.Config
	}{
		{
			"host:port list: Portico's resolver, health of the service",
			config.UpstreamConfig{Name: "order", Addresses: []string{"10.0.0.1:1", "10.0.0.2:1"}, Timeout: 3 * time.Second, HealthService: "svc"},
			interceptors.Config{Name: "order", Addresses: []string{"10.0.0.1:1", "10.0.0.2:1"}, Timeout: interceptors.NoTimeout,
				HealthCheck: interceptors.HealthCheckConfig{Enabled: new(true), Service: "svc"}},
		},
		{
			"dns target",
			config.UpstreamConfig{Name: "order", Addresses: []string{"dns:///order:43103"}},
			interceptors.Config{Name: "order", Target: "dns:///order:43103", Timeout: interceptors.NoTimeout,
				HealthCheck: interceptors.HealthCheckConfig{Enabled: new(true)}},
		},
		{
			"an explicit chain timeout is kept (older configs)",
			config.UpstreamConfig{Name: "order", Addresses: []string{"a:1"}, Resilience: interceptors.Config{Timeout: 240 * time.Millisecond}},
			interceptors.Config{Name: "order", Addresses: []string{"a:1"}, Timeout: 240 * time.Millisecond,
				HealthCheck: interceptors.HealthCheckConfig{Enabled: new(true)}},
		},
		{
			"resilience kept, health check as configured",
			config.UpstreamConfig{Name: "order", Addresses: []string{"a:1"}, HealthService: "svc", Resilience: interceptors.Config{
				Retry: interceptors.RetryConfig{MaxAttempts: 1}, HealthCheck: interceptors.HealthCheckConfig{Enabled: new(true), Service: "other"}}},
			interceptors.Config{Name: "order", Addresses: []string{"a:1"}, Timeout: interceptors.NoTimeout,
				Retry: interceptors.RetryConfig{MaxAttempts: 1}, HealthCheck: interceptors.HealthCheckConfig{Enabled: new(true), Service: "other"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.up.Chain()); d != "" {
				t.Errorf("Chain() (-want +got):\n%s", d)
			}
		})
	}
}

// TestEdgeHealthCheckSwitch: at the edge health checking is on unless the
// file says health_check.enabled: false; absent and false are told apart.
func TestEdgeHealthCheckSwitch(t *testing.T) {
	tests := []struct {
		name  string
		block string
		want  interceptors.HealthCheckConfig
	}{
		{"absent: on, the upstream's health_service", "{}", interceptors.HealthCheckConfig{Enabled: new(true), Service: "portico.order.v1.OrderService"}},
		{"enabled: false turns it off", "{health_check: {enabled: false}}", interceptors.HealthCheckConfig{Enabled: new(false)}},
		{"enabled: true without a service: the whole server", "{health_check: {enabled: true}}", interceptors.HealthCheckConfig{Enabled: new(true)}},
		{"a service alone is watched", "{health_check: {service: other}}", interceptors.HealthCheckConfig{Enabled: new(true), Service: "other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(string(resilienceDoc(tt.block)), "resilience:", "health_service: portico.order.v1.OrderService, resilience:", 1)
			c, err := config.Parse([]byte(doc), CheckRoutes)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, c.Upstreams[2].Chain().HealthCheck); d != "" {
				t.Errorf("Chain().HealthCheck (-want +got):\n%s", d)
			}
		})
	}
}
