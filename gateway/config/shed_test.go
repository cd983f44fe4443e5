package config

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestShedCapsBelowMinusOne: a count where -1 turns a feature off refuses
// anything below -1, naming the field (shed.max_in_flight: -5 silently
// turned shedding off); -1 itself still means off.
func TestShedCapsBelowMinusOne(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Config)
		field string // "" for valid
	}{
		{"shed off", func(c *Config) { c.Shed.MaxInFlight = -1 }, ""},
		{"shed -5", func(c *Config) { c.Shed.MaxInFlight = -5 }, "shed.max_in_flight"},
		{"nobody waits", func(c *Config) { c.Shed.MaxQueue = -1 }, ""},
		{"queue -2", func(c *Config) { c.Shed.MaxQueue = -2 }, "shed.max_queue"},
		{"bulkhead no queue", func(c *Config) { c.Upstreams[0].Resilience.Bulkhead.Queue = -1 }, ""},
		{"bulkhead queue -3", func(c *Config) { c.Upstreams[0].Resilience.Bulkhead.Queue = -3 }, "bulkhead.queue"},
		{"breaker rule off", func(c *Config) { c.Upstreams[0].Resilience.Breaker.ConsecutiveFailures = -1 }, ""},
		{"breaker rule -2", func(c *Config) { c.Upstreams[0].Resilience.Breaker.ConsecutiveFailures = -2 }, "breaker.consecutive_failures"},
		{"no ejection", func(c *Config) { c.Upstreams[0].Resilience.Ejection.ConsecutiveFailures = -1 }, ""},
		{"ejection -9", func(c *Config) { c.Upstreams[0].Resilience.Ejection.ConsecutiveFailures = -9 }, "ejection.consecutive_failures"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Dev(43100)
			tt.edit(&c)
			b, err := yaml.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(b)
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("Parse = %v, want ok", err)
			case tt.field != "" && (err == nil || !strings.Contains(err.Error(), tt.field)):
				t.Fatalf("Parse = %v, want an error naming %s", err, tt.field)
			}
		})
	}
}
