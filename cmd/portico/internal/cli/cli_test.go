package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCommands(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const ups = `upstreams:
  - {name: inventory, addresses: [127.0.0.1:1]}
  - {name: payment, addresses: [127.0.0.1:2]}
  - {name: order, addresses: [127.0.0.1:3]%s}
`
	good := write("good.yaml", strings.Replace(ups, "%s", "", 1))
	n := 0
	res := func(block string) string {
		n++
		return write(fmt.Sprintf("res-%d.yaml", n), strings.Replace(ups, "%s", ", resilience: "+block, 1))
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string // substring of stderr
	}{
		{"no command", nil, 2, "usage"},
		{"check-config without a file", []string{"check-config"}, 2, "portico help check-config"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"check-config ok", []string{"check-config", good}, 0, ""},
		{"check-config missing file", []string{"check-config", filepath.Join(dir, "nope.yaml")}, 1, "nope.yaml"},
		{"check-config unknown key", []string{"check-config", write("typo.yaml", "listn: x\n")}, 1, "listn"},
		{"negative timeout names the field", []string{"check-config", res("{timeout: -1s}")}, 1, "timeout"},
		{"attempts below 1 names the field", []string{"check-config", res("{retry: {max_attempts: -1}}")}, 1, "retry.max_attempts"},
		{"breaker that can never open", []string{"check-config", res("{breaker: {consecutive_failures: -1, failure_rate: -1}}")}, 1, "breaker.consecutive_failures"},
		{"negative probes names the field", []string{"check-config", res("{breaker: {half_open_probes: -1}}")}, 1, "breaker.half_open_probes"},
		{"unknown resilience key names path and line", []string{"check-config", res("{breakr: {}}")}, 1, "upstreams[2].resilience.breakr: unknown field (line 4)"},
		{"explicit zero attempts", []string{"check-config", res("{retry: {max_attempts: 0}}")}, 1, "upstreams[2].resilience.retry.max_attempts: 0 is not allowed"},
		{"explicit zero threshold", []string{"check-config", res("{breaker: {consecutive_failures: 0}}")}, 1, "breaker.consecutive_failures: 0 is not allowed"},
		{"explicit zero timeout", []string{"check-config", res("{timeout: 0s}")}, 1, "resilience.timeout: 0 is not allowed"},
		{"zero spelt 0ms", []string{"check-config", res("{breaker: {cool_down: 0ms}}")}, 1, "breaker.cool_down: 0 is not allowed"},
		{"zero spelt 00", []string{"check-config", res("{breaker: {consecutive_failures: 00}}")}, 1, "breaker.consecutive_failures: 0 is not allowed"},
		{"zero ratio", []string{"check-config", res("{retry: {budget_ratio: 0.0}}")}, 1, "retry.budget_ratio: 0 is not allowed"},
		{"zero in hex", []string{"check-config", res("{retry: {max_attempts: 0x0}}")}, 1, "retry.max_attempts: 0 is not allowed"},
		{"a service named 0 is not a number", []string{"check-config", res(`{health_check: {enabled: true, service: "0"}}`)}, 0, ""},
		{"fraction of an attempt", []string{"check-config", res("{retry: {max_attempts: 1.5}}")}, 1, "retry.max_attempts: want an integer"},
		{"dns refresh too fast", []string{"check-config", res("{dns_refresh: 1ns}")}, 1, "dns_refresh: must be at least 1s"},
		{"zero that means off is fine", []string{"check-config", res("{retry: {attempt_timeout: 0s}}")}, 0, ""},
		{"gateway needs --config", []string{"gateway"}, 2, "--config"},
		{"dev base port out of range", []string{"dev", "--base-port", "70000"}, 1, "base-port"},
		{"bad log level", []string{"inventory", "--log-level", "loud"}, 1, "log-level"},
		{"bad faults spec", []string{"inventory", "--faults", "delay=banana"}, 1, "faults"},
		{"stray argument", []string{"payment", "extra"}, 2, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if got := Main(tt.args, &out, &errb); got != tt.wantCode {
				t.Fatalf("Main(%q) = %d, want %d; stderr %s", tt.args, got, tt.wantCode, errb.String())
			}
			if !strings.Contains(errb.String(), tt.wantErr) {
				t.Errorf("stderr = %q, want it to mention %q", errb.String(), tt.wantErr)
			}
		})
	}
}

func TestHostPorts(t *testing.T) {
	tests := []struct {
		name  string
		addrs []string
		want  bool
	}{
		{"one host:port", []string{"127.0.0.1:43101"}, true},
		{"several", []string{"10.0.0.1:1", "inventory:2"}, true},
		{"dns target", []string{"dns:///inventory:43101"}, false},
		{"no port", []string{"inventory"}, false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hostPorts(tt.addrs); got != tt.want {
				t.Errorf("hostPorts(%q) = %v, want %v", tt.addrs, got, tt.want)
			}
		})
	}
}
