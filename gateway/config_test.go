package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/interceptors"
)

func TestDevConfigRoundTrip(t *testing.T) {
	// portico dev writes yaml.Marshal(DevConfig(base)) and the edge process
	// loads it back.
	want := DevConfig(43100)
	b, err := yaml.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseConfig(b)
	if err != nil {
		t.Fatalf("ParseConfig(yaml.Marshal(DevConfig)) = %v\n%s", err, b)
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Config{})); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if want.Listen != "127.0.0.1:43100" || want.Upstreams[2].Addresses[0] != "127.0.0.1:43103" {
		t.Errorf("DevConfig ports: listen %s, order %v", want.Listen, want.Upstreams[2].Addresses)
	}
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := ParseConfig([]byte("upstreams: [{name: inventory, addresses: [a:1]}, {name: payment, addresses: [b:1]}, {name: order, addresses: [c:1]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Listen: DefaultListen, ShutdownGrace: DefaultShutdownGrace,
		HTTP: HTTPConfig{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
			BodyTimeout: 10 * time.Second, MinBodyRate: 1024},
		Upstreams: []UpstreamConfig{
			{Name: "inventory", Addresses: []string{"a:1"}, Timeout: 5 * time.Second},
			{Name: "payment", Addresses: []string{"b:1"}, Timeout: 5 * time.Second},
			{Name: "order", Addresses: []string{"c:1"}, Timeout: 5 * time.Second},
		},
		Routes: RoutesConfig{MaxBodyBytes: 1 << 20, MaxTimeout: 30 * time.Second},
		Health: HealthConfig{Timeout: 300 * time.Millisecond},
		Shed: ShedConfig{MaxInFlight: 1024, MaxQueue: 64, RetryAfter: time.Second,
			MaxInFlightPerClient: 64, MaxInFlightPerCaller: 64},
		Streams: StreamsConfig{MaxOpen: 10000, MaxPerCaller: 16, MaxDuration: time.Hour, IdleTimeout: 5 * time.Minute,
			Heartbeat: 15 * time.Second, WriteTimeout: 10 * time.Second, TicketTTL: 30 * time.Second},
	}
	if d := cmp.Diff(want, c, cmpopts.IgnoreUnexported(Config{})); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
}

// TestExampleConfig loads the configuration reference users copy.
func TestExampleConfig(t *testing.T) {
	c, err := LoadConfig(filepath.Join("..", "deploy", "portico.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Upstreams[2].Resilience; r.Breaker.ConsecutiveFailures != 2 || r.Breaker.CoolDown != 800*time.Millisecond {
		t.Errorf("order's resilience = %+v, want breaker 2 failures / 800ms", r)
	}
	if d := cmp.Diff(interceptors.Config{}, c.Upstreams[0].Resilience); d != "" {
		t.Errorf("inventory has no resilience block, got (-want +got):\n%s", d)
	}
	// The example must also build a server: override keys select routes.
	h := newHarness(t, setup{cfg: func(cfg *Config) { *cfg = c }})
	if r := h.do("GET", "/healthz/live", "", ""); r.status != 200 {
		t.Errorf("live = %d", r.status)
	}
}

// TestConfigErrors compares the error of every bad config in testdata with
// its golden file: each problem named by its field path.
func TestConfigErrors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "config", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseConfig(data)
			if err == nil {
				t.Fatalf("ParseConfig(%s) = nil, want an error", f)
			}
			golden(t, "config/"+name+".err", []byte(err.Error()+"\n"))
		})
	}
}

// TestNewRejects covers what only New can check: the config against the
// registration list and route table.
func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(*Config)
		want string
	}{
		{"override selects no route", func(c *Config) {
			c.Routes.Overrides = map[string]RouteOverride{"GET /api/nothing": {Timeout: time.Second}}
		}, `routes.overrides["GET /api/nothing"]: selects no route`},
		{"two overrides select one route", func(c *Config) {
			c.Routes.Overrides = map[string]RouteOverride{"/api/orders": {Timeout: time.Second}, "POST /api/orders": {Timeout: time.Second}}
		}, "both select POST /api/orders"},
		{"override timeout over max", func(c *Config) {
			c.Routes.Overrides = map[string]RouteOverride{"portico.order.v1.OrderService.GetOrder": {Timeout: time.Minute}}
		}, "timeout 1m0s exceeds max_timeout 30s"},
		{"upstream timeout over max", func(c *Config) { c.Upstreams[0].Timeout = time.Hour }, "exceeds routes.max_timeout"},
		{"unused upstream", func(c *Config) {
			c.Upstreams = append(c.Upstreams, UpstreamConfig{Name: "extra", Addresses: []string{"a:1"}})
		}, `"extra" serves no registered service`},
		{"invalid config", func(c *Config) { c.Upstreams[0].Name = "" }, "upstreams[0].name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DevConfig(43100)
			tt.cfg(&c)
			srv, err := New(context.Background(), c, WithLogger(discardLogger()))
			if err == nil {
				srv.Close()
				t.Fatalf("New() = nil error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New() = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// FuzzParseConfig: ParseConfig never panics, and whatever it accepts is
// valid and survives a YAML round trip unchanged.
func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "config", "*.yaml"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("upstreams: [{name: a, addresses: [x]}]\nroutes: {overrides: {\"/api/x\": {timeout: 1ns}}}"))
	f.Add([]byte("upstreams: &u [{name: a, addresses: [x]}]\nhealth: *u"))
	f.Add([]byte("admin_listen: 127.0.0.1:43104\nops: {watch_interval: -1s, keep_versions: 3, ready_requires: [order]}\n" +
		"upstreams: [{name: inventory, addresses: [169.254.169.254:80]}, {name: payment, addresses: [\"[fd00:ec2::254]:1\"]}, {name: order, addresses: [dns:///metadata:80]}]"))
	f.Add([]byte("shutdown_grace: 1s\nupstreams: [{name: inventory, addresses: [a:1], resilience: {retry: {max_attempts: 99}}}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("ParseConfig accepted an invalid config: %v", err)
		}
		b, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("yaml.Marshal: %v", err)
		}
		again, err := ParseConfig(b)
		if err != nil {
			t.Fatalf("round trip of %q: %v\n%s", data, err, b)
		}
		if d := cmp.Diff(c, again, cmpopts.IgnoreFields(UpstreamConfig{}, "Resilience"), cmpopts.IgnoreUnexported(Config{})); d != "" {
			t.Fatalf("round trip changed the config (-first +second):\n%s", d)
		}
	})
}
