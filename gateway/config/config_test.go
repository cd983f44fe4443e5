package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"
)

func TestDevRoundTrip(t *testing.T) {
	// portico dev writes yaml.Marshal(Dev(base)) and the edge process
	// loads it back.
	want := Dev(43100)
	b, err := yaml.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse(yaml.Marshal(Dev)) = %v\n%s", err, b)
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Config{})); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if want.Listen != "127.0.0.1:43100" || want.Upstreams[2].Addresses[0] != "127.0.0.1:43103" {
		t.Errorf("Dev ports: listen %s, order %v", want.Listen, want.Upstreams[2].Addresses)
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := Parse([]byte("upstreams: [{name: inventory, addresses: [a:1]}, {name: payment, addresses: [b:1]}, {name: order, addresses: [c:1]}]\n"))
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

// FuzzParse: Parse never panics, and whatever it accepts is
// valid and survives a YAML round trip unchanged.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "config", "*.yaml"))
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
		c, err := Parse(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid config: %v", err)
		}
		b, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("yaml.Marshal: %v", err)
		}
		again, err := Parse(b)
		if err != nil {
			t.Fatalf("round trip of %q: %v\n%s", data, err, b)
		}
		if d := cmp.Diff(c, again, cmpopts.IgnoreFields(UpstreamConfig{}, "Resilience"), cmpopts.IgnoreUnexported(Config{})); d != "" {
			t.Fatalf("round trip changed the config (-first +second):\n%s", d)
		}
	})
}
