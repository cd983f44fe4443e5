package gateway

import (
	"math"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/gateway/config"
)

// TestConfigSemantics: each semantic check, by a bad config in and the
// exact message out, through config.Parse with CheckRoutes (what gateway, a reload and
// check-config run).
func TestConfigSemantics(t *testing.T) {
	tests := []struct {
		name string
		edit func(*config.Config)
		want string // "" means valid
	}{
		{"dev config", func(*config.Config) {}, ""},
		{"policy grants the reserved role service", func(c *config.Config) {
			c.Auth.Tokens, c.Auth.SignedApps = nil, config.SignedAppsConfig{}
			c.Auth.APIKeys = []config.APIKeyConfig{{Key: "svc-key-0001", Subject: "impostor", Roles: []string{"service"}}}
			c.Auth.Policy = []config.PolicyRuleConfig{{Roles: []string{"service"}, Allow: []string{"*"}}}
		}, `gateway config: auth.policy[0].roles[0]: role "service" is reserved for Portico's services calling one another; the edge never grants it`},
		{"cloud metadata IPv4", func(c *config.Config) { c.Upstreams[0].Addresses = []string{"169.254.169.254:80"} },
			`gateway config: upstreams[0].addresses[0]: "169.254.169.254:80" is a cloud metadata endpoint`},
		{"cloud metadata IPv6", func(c *config.Config) { c.Upstreams[0].Addresses = []string{"[fd00:ec2::254]:80"} },
			`gateway config: upstreams[0].addresses[0]: "[fd00:ec2::254]:80" is a cloud metadata endpoint`},
		{"cloud metadata name behind dns", func(c *config.Config) { c.Upstreams[1].Addresses = []string{"dns:///metadata.google.internal:80"} },
			`gateway config: upstreams[1].addresses[0]: "dns:///metadata.google.internal:80" is a cloud metadata endpoint`},
		{"link-local", func(c *config.Config) { c.Upstreams[0].Addresses = []string{"127.0.0.1:1", "169.254.10.1:43101"} },
			`gateway config: upstreams[0].addresses[1]: "169.254.10.1:43101" is link-local`},
		{"link-local IPv6", func(c *config.Config) { c.Upstreams[0].Addresses = []string{"[fe80::1]:43101"} },
			`gateway config: upstreams[0].addresses[0]: "[fe80::1]:43101" is link-local`},
		{"unspecified", func(c *config.Config) { c.Upstreams[2].Addresses = []string{"0.0.0.0:43103"} },
			`gateway config: upstreams[2].addresses[0]: "0.0.0.0:43103" is unspecified (0.0.0.0 or ::); name the host`},
		{"port 0", func(c *config.Config) { c.Upstreams[2].Addresses = []string{"order:0"} },
			`gateway config: upstreams[2].addresses[0]: "order:0" has port "0"; want a port of 1-65535 or a known service name`},
		// Addresses that could never be dialled (interceptors.CheckAddresses):
		// they used to load and answer 502 on every call.
		{"scheme gRPC has no resolver for", func(c *config.Config) { c.Upstreams[0].Addresses = []string{"foo://bar"} },
			`gateway config: upstreams[0].addresses[0]: "foo://bar": gRPC has no resolver for scheme "foo"; want host:port (port 1-65535), several host:port, or one gRPC target such as dns:///name:port`},
		{"http URL", func(c *config.Config) { c.Upstreams[0].Addresses = []string{"http://127.0.0.1:31001"} },
			`gateway config: upstreams[0].addresses[0]: "http://127.0.0.1:31001": gRPC has no resolver for scheme "http"; want host:port (port 1-65535), several host:port, or one gRPC target such as dns:///name:port`},
		{"dns without a name", func(c *config.Config) { c.Upstreams[1].Addresses = []string{"dns:///"} },
			`gateway config: upstreams[1].addresses[0]: "dns:///" is not host:port; want host:port (port 1-65535), several host:port, or one gRPC target such as dns:///name:port`},
		{"dns port out of range", func(c *config.Config) { c.Upstreams[1].Addresses = []string{"dns:///localhost:99999"} },
			`gateway config: upstreams[1].addresses[0]: "dns:///localhost:99999" has port "99999"; want a port of 1-65535 or a known service name`},
		{"port not a number", func(c *config.Config) { c.Upstreams[2].Addresses = []string{"localhost:abc"} },
			`gateway config: upstreams[2].addresses[0]: "localhost:abc" has port "abc"; want a port of 1-65535 or a known service name`},
		{"every bad entry of a list, by index", func(c *config.Config) {
			c.Upstreams[0].Addresses = []string{"[::1]:43101", "localhost:abc", "dns:///inventory:43101"}
		}, "gateway config: upstreams[0].addresses[1]: \"localhost:abc\" has port \"abc\"; want a port of 1-65535 or a known service name\n" +
			"upstreams[0].addresses[2]: \"dns:///inventory:43101\" is not host:port; with several addresses each must be host:port"},
		{"IPv6 loopback list", func(c *config.Config) { c.Upstreams[0].Addresses = []string{"[::1]:43101", "127.0.0.1:43111"} }, ""},
		{"unix socket target", func(c *config.Config) { c.Upstreams[0].Addresses = []string{"unix:///run/portico/inventory.sock"} }, ""},
		{"timeout beyond the drain window", func(c *config.Config) { c.ShutdownGrace = 4 * time.Second },
			"gateway config: upstreams[0].timeout: 5s is longer than shutdown_grace 4s: a drain would cut these requests\n" +
				"upstreams[1].timeout: 5s is longer than shutdown_grace 4s: a drain would cut these requests\n" +
				"upstreams[2].timeout: 5s is longer than shutdown_grace 4s: a drain would cut these requests"},
		{"override beyond the drain window", func(c *config.Config) {
			c.Routes.Overrides = map[string]config.RouteOverride{"POST /api/orders": {Timeout: 20 * time.Second}}
			c.ShutdownGrace = 15 * time.Second
		}, `gateway config: routes.overrides["POST /api/orders"].timeout: 20s is longer than shutdown_grace 15s: a drain would cut these requests`},
		{"route timeout over the edge maximum", func(c *config.Config) { c.Upstreams[0].Timeout = 40 * time.Second },
			"gateway config: GET /api/inventory/{sku}: the inventory upstream's timeout 40s exceeds routes.max_timeout 30s\n" +
				"upstreams[0].timeout: 40s is longer than shutdown_grace 10s: a drain would cut these requests"},
		// Field checks and cross-field checks report together; a value
		// the field checks refuse is not compared as well.
		{"field and cross-field reasons at once", func(c *config.Config) {
			c.HTTP.ReadTimeout = time.Nanosecond
			c.Upstreams[0].Resilience.MinBudget = 10 * time.Second
		}, "gateway config: http.read_timeout: want at least 100ms (0: the default), got 1ns\n" +
			"upstreams[0].resilience.min_budget: 10s is not shorter than the upstream's timeout 5s: every call would fail before it is sent"},
		{"a refused shutdown grace is not compared", func(c *config.Config) { c.ShutdownGrace = -time.Second },
			"gateway config: shutdown_grace: must not be negative, got -1s"},
		{"too many attempts", func(c *config.Config) { c.Upstreams[0].Resilience.Retry.MaxAttempts = 50 },
			"gateway config: upstreams[0].resilience.retry.max_attempts: 50 attempts multiply load on a failing upstream; at most 10"},
		{"attempt timeout not shorter than the call", func(c *config.Config) { c.Upstreams[0].Resilience.Retry.AttemptTimeout = 5 * time.Second },
			"gateway config: upstreams[0].resilience.retry.attempt_timeout: 5s is not shorter than the upstream's timeout 5s: no retry could ever run"},
		{"breaker cool-down too long", func(c *config.Config) { c.Upstreams[1].Resilience.Breaker.CoolDown = time.Hour },
			"gateway config: upstreams[1].resilience.breaker.cool_down: 1h0m0s is over 10m0s: a recovered upstream would stay cut off"},
		{"slow-call threshold never reached", func(c *config.Config) { c.Upstreams[1].Resilience.Breaker.SlowCallThreshold = 6 * time.Second },
			"gateway config: upstreams[1].resilience.breaker.slow_call_threshold: 6s is not shorter than the upstream's timeout 5s: no call could count as slow"},
		{"bulkhead wait eats the deadline", func(c *config.Config) { c.Upstreams[2].Resilience.Bulkhead.MaxWait = 5 * time.Second },
			"gateway config: upstreams[2].resilience.bulkhead.max_wait: 5s is not shorter than the upstream's timeout 5s: a queued call would spend its whole deadline waiting"},
		{"body limit too big", func(c *config.Config) { c.Routes.MaxBodyBytes = 1 << 30 },
			"gateway config: routes.max_body_bytes: 1073741824 is over 67108864: the edge buffers bodies in memory"},
		{"header limit too big", func(c *config.Config) { c.HTTP.MaxHeaderBytes = 8 << 20 },
			"gateway config: http.max_header_bytes: 8388608 is over 1048576"},
		{"max timeout too long", func(c *config.Config) { c.Routes.MaxTimeout = time.Hour; c.ShutdownGrace = time.Hour },
			"gateway config: routes.max_timeout: 1h0m0s is over 10m0s: hold long work in a job, not a request"},
		{"admin on the API listener", func(c *config.Config) { c.AdminListen = c.Listen },
			`gateway config: admin_listen: must differ from listen "127.0.0.1:43100"`},
		{"ready requires an unknown upstream", func(c *config.Config) { c.Ops.ReadyRequires = []string{"order", "billing"} },
			`gateway config: ops.ready_requires[1]: no upstream named "billing"`},
		{"redis url of another scheme keeps its password out", func(c *config.Config) { c.Redis.URL = "http://:hunter2pass@127.0.0.1:6379/0" },
			`gateway config: redis.url: want redis://host:port[/db] or rediss://host:port[/db], got "http://:REDACTED@127.0.0.1:6379/0"`},
		{"redis url without a host keeps its password out", func(c *config.Config) { c.Redis.URL = "redis://:hunter2pass@/0" },
			`gateway config: redis.url: want redis://host:port[/db] or rediss://host:port[/db], got "redis://:REDACTED@/0"`},
		{"unparsable redis url keeps its password out", func(c *config.Config) { c.Redis.URL = "redis://u:hunter2%zz@127.0.0.1:6379" },
			`gateway config: redis.url: want redis://host:port[/db] or rediss://host:port[/db], got "redis://REDACTED@127.0.0.1:6379"`},
		{"NaN trace sample ratio", func(c *config.Config) { nan := math.NaN(); c.Telemetry.Traces.SampleRatio = &nan },
			"gateway config: telemetry.traces.sample_ratio: want 0 to 1, got NaN"},
		{"telemetry reports every bad field", func(c *config.Config) {
			ratio, rate := 7.0, -3.0
			c.Telemetry = config.TelemetryConfig{
				Traces: config.TracesConfig{Endpoint: "collector:4318", Protocol: "udp", SampleRatio: &ratio},
				Logs:   config.LogsConfig{SampleRate: &rate, SlowThreshold: -time.Second},
			}
		}, "gateway config: telemetry.traces.endpoint: want an http(s) URL such as http://127.0.0.1:4318, got \"collector:4318\"\n" +
			"telemetry.traces.protocol: want grpc or http/protobuf, got \"udp\"\n" +
			"telemetry.traces.sample_ratio: want 0 to 1, got 7\n" +
			"telemetry.logs.sample_rate: want 0 to 1, got -3\n" +
			"telemetry.logs.slow_threshold: must not be negative, got -1s"},
		{"override reports every bad field", func(c *config.Config) {
			c.Routes.Overrides = map[string]config.RouteOverride{"GET /api/orders": {Timeout: -time.Second, MaxBodyBytes: -1}}
		}, "gateway config: routes.overrides[\"GET /api/orders\"].timeout: must not be negative, got -1s\n" +
			"routes.overrides[\"GET /api/orders\"].max_body_bytes: must not be negative"},
		{"identity with both key sources still checks ttl", func(c *config.Config) {
			c.Identity = config.IdentityConfig{KeysFile: "/nonexistent/identity.keys", KeysEnv: "PORTICO_IDENTITY_KEYS", TTL: time.Hour}
		}, "gateway config: identity: set keys_file or keys_env, not both\n" +
			"identity.ttl: want 0 (default 1m0s) to 5m0s, got 1h0m0s"},
		{"limit reports every bad field", func(c *config.Config) {
			c.Limits.Plans["default"] = config.LimitConfig{Rate: 0, Period: -time.Second, Burst: -1}
		}, "gateway config: limits.plans[\"default\"].rate: must be positive, got 0\n" +
			"limits.plans[\"default\"].period: must not be negative, got -1s\n" +
			"limits.plans[\"default\"].burst: must not be negative, got -1"},
		{"limit too fine to enforce", func(c *config.Config) {
			c.Limits.Plans["default"] = config.LimitConfig{Rate: 10, Period: time.Nanosecond}
		},
			"gateway config: limits.plans[\"default\"]: rate 10 per 1ns is finer than a nanosecond"},
		{"tls reports the pair and the client CA", func(c *config.Config) {
			c.TLS = config.TLSConfig{CertFile: "/nonexistent/edge.pem", ClientCAFile: "/nonexistent/ca.pem"}
		}, "gateway config: tls: tls: both a cert file and a key file are required\n" +
			"tls: tls: CA file: open /nonexistent/ca.pem: no such file or directory"},
		{"upstream tls reports the CA and the pair", func(c *config.Config) {
			c.Upstreams[0].TLS = config.UpstreamTLSConfig{CAFile: "/nonexistent/ca.pem", CertFile: "/nonexistent/client.pem"}
		}, "gateway config: upstreams[0].tls: tls: CA file: open /nonexistent/ca.pem: no such file or directory\n" +
			"upstreams[0].tls: tls: a client certificate needs both a cert and a key file"},
		{"a derived shutdown grace stays within its bound", func(c *config.Config) { c.ShutdownGrace, c.Upstreams[0].Timeout = 0, 61*time.Minute },
			"gateway config: GET /api/inventory/{sku}: the inventory upstream's timeout 1h1m0s exceeds routes.max_timeout 30s\n" +
				"upstreams[0].timeout: 1h1m0s is longer than shutdown_grace 1h0m0s: a drain would cut these requests"},
		{"shutdown grace of centuries", func(c *config.Config) { c.ShutdownGrace = 2562047 * time.Hour },
			"gateway config: shutdown_grace: want at most 1h0m0s, got 2562047h0m0s"},
		{"drain delay of centuries", func(c *config.Config) { c.DrainDelay = 2562047 * time.Hour },
			"gateway config: drain_delay: want at most 1h0m0s, got 2562047h0m0s"},
		{"shutdown grace and drain delay at their bound", func(c *config.Config) { c.ShutdownGrace, c.DrainDelay = time.Hour, time.Hour }, ""},
		{"http timeouts that answer nothing", func(c *config.Config) {
			c.HTTP.ReadHeaderTimeout, c.HTTP.ReadTimeout, c.HTTP.IdleTimeout = time.Nanosecond, time.Nanosecond, time.Nanosecond
		}, "gateway config: http.read_header_timeout: want at least 100ms (0: the default), got 1ns\n" +
			"http.read_timeout: want at least 100ms (0: the default), got 1ns\n" +
			"http.idle_timeout: want at least 100ms (0: the default), got 1ns"},
		{"http timeouts of days", func(c *config.Config) {
			c.HTTP.ReadHeaderTimeout, c.HTTP.ReadTimeout, c.HTTP.IdleTimeout = 48*time.Hour, 48*time.Hour, 48*time.Hour
		}, "gateway config: http.read_header_timeout: want at most 1h0m0s, got 48h0m0s\n" +
			"http.read_timeout: want at most 1h0m0s, got 48h0m0s\n" +
			"http.idle_timeout: want at most 1h0m0s, got 48h0m0s"},
		{"http timeouts at their bounds", func(c *config.Config) {
			c.HTTP.ReadHeaderTimeout, c.HTTP.ReadTimeout, c.HTTP.IdleTimeout = config.MinHTTPTimeout, config.MaxHTTPTimeout, config.MinHTTPTimeout
		}, ""},
		{"min budget that fails every call", func(c *config.Config) { c.Upstreams[0].Resilience.MinBudget = 2562047 * time.Hour },
			"gateway config: upstreams[0].resilience.min_budget: 2562047h0m0s is not shorter than the upstream's timeout 5s: every call would fail before it is sent"},
		{"min budget equal to the timeout", func(c *config.Config) { c.Upstreams[0].Resilience.MinBudget = 5 * time.Second },
			"gateway config: upstreams[0].resilience.min_budget: 5s is not shorter than the upstream's timeout 5s: every call would fail before it is sent"},
		{"min budget below the timeout", func(c *config.Config) { c.Upstreams[0].Resilience.MinBudget = 50 * time.Millisecond }, ""},
		{"NaN log sample rate", func(c *config.Config) { nan := math.NaN(); c.Telemetry.Logs.SampleRate = &nan },
			"gateway config: telemetry.logs.sample_rate: want 0 to 1, got NaN"},
		{"watch interval that spins", func(c *config.Config) { c.Ops.WatchInterval = time.Nanosecond },
			"gateway config: ops.watch_interval: want at least 10ms (negative: no watching), got 1ns"},
		{"negative keep_versions", func(c *config.Config) { c.Ops.KeepVersions = -1 },
			"gateway config: ops.keep_versions: must not be negative, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Dev(43100)
			tt.edit(&c)
			b, err := yaml.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			_, err = config.Parse(b, CheckRoutes)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Parse() error =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
