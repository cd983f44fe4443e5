package config

import (
	"math"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDefaultMaxConnections: the default keeps max(256, limit/5)
// descriptors back from the open-file limit, is at least 64, and is
// FallbackMaxConnections when the limit is unknown or unlimited.
func TestDefaultMaxConnections(t *testing.T) {
	for _, tt := range []struct {
		nofile uint64
		want   int
	}{
		{0, FallbackMaxConnections},                 // unknown (not Linux) or unlimited
		{math.MaxInt32 + 1, FallbackMaxConnections}, // past any real limit: unlimited
		{100, MinDefaultMaxConnections},             // below the reserve: the floor
		{256, MinDefaultMaxConnections},
		{320, MinDefaultMaxConnections}, // 64 left: the floor exactly
		{1024, 768},                     // a classic ulimit: the 256 reserve
		{1280, 1024},                    // 1280/5 = 256: both reserves agree
		{4096, 3277},                    // a fifth (819) from here on
		{20000, 16000},
		{65536, 52429},
		{1048576, 838861}, // a container's usual hard limit
	} {
		if got := DefaultMaxConnections(tt.nofile); got != tt.want {
			t.Errorf("DefaultMaxConnections(%d) = %d, want %d", tt.nofile, got, tt.want)
		}
	}
}

// TestMaxConnectionsValidation: 0 (the default) and -1 (no cap) load, as
// does a count; below -1 is an error naming the field, so a typo cannot
// turn the cap off.
func TestMaxConnectionsValidation(t *testing.T) {
	for _, tt := range []struct {
		max   int
		valid bool
	}{
		{0, true},
		{-1, true},
		{-2, false},
		{math.MinInt32, false},
		{1, true},
		{10000, true},
	} {
		c := Dev(43100)
		c.HTTP.MaxConnections = tt.max
		b, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(b)
		switch {
		case tt.valid && err != nil:
			t.Errorf("Parse(max_connections %d) = %v, want ok", tt.max, err)
		case tt.valid && got.HTTP.MaxConnections != tt.max:
			t.Errorf("Parse(max_connections %d) = %d, want it kept (0 resolves when the edge serves)", tt.max, got.HTTP.MaxConnections)
		case !tt.valid && (err == nil || !strings.Contains(err.Error(), "http.max_connections")):
			t.Errorf("Parse(max_connections %d) = %v, want an error naming http.max_connections", tt.max, err)
		}
	}
}
