package gateway

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/interceptors"
)

type healthMoves map[string][]string

func (h healthMoves) SetUpstreamAddresses(name string, addrs []string) error {
	h[name] = addrs
	return nil
}

func TestUpstreamsReload(t *testing.T) {
	base := DevConfig(43100)
	base.Upstreams[2].Addresses = []string{"dns:///order:43103"}
	tests := []struct {
		name     string
		edit     func(*Config)
		wantInv  []string // inventory's addresses in effect
		wantMove bool     // /health moved for inventory
		wantLog  string   // substring of the log; "" means nothing logged
	}{
		{"nothing changed", func(*Config) {}, []string{"127.0.0.1:43101"}, false, ""},
		{"instances change in place", func(c *Config) {
			c.Upstreams[0].Addresses = []string{"127.0.0.1:1", "127.0.0.1:2"}
		}, []string{"127.0.0.1:1", "127.0.0.1:2"}, true, "upstream addresses changed"},
		{"other fields need a restart", func(c *Config) {
			c.Health.Timeout = time.Second
		}, []string{"127.0.0.1:43101"}, false, "restart to apply the rest"},
		{"a resilience change needs a restart", func(c *Config) {
			c.Upstreams[0].Resilience.Retry.MaxAttempts = 1
		}, []string{"127.0.0.1:43101"}, false, "restart to apply the rest"},
		{"a gRPC target cannot change in place", func(c *Config) {
			c.Upstreams[2].Addresses = []string{"127.0.0.1:3"}
		}, []string{"127.0.0.1:43101"}, false, "only a host:port list can change in place"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ups := NewUpstreams(interceptors.WithLogger(slog.New(slog.DiscardHandler)))
			defer ups.Close()
			for _, up := range base.Upstreams {
				if _, err := ups.Dialer()(context.Background(), up); err != nil {
					t.Fatal(err)
				}
			}
			next := base
			next.Upstreams = slices.Clone(base.Upstreams)
			tt.edit(&next)
			var logs bytes.Buffer
			moves := healthMoves{}
			got := ups.Reload(base, next, moves, slog.New(slog.NewTextHandler(&logs, nil)))
			if !slices.Equal(got.Upstreams[0].Addresses, tt.wantInv) {
				t.Errorf("inventory addresses in effect = %v, want %v", got.Upstreams[0].Addresses, tt.wantInv)
			}
			if _, moved := moves["inventory"]; moved != tt.wantMove {
				t.Errorf("/health moved = %v, want %v", moved, tt.wantMove)
			}
			if tt.wantLog == "" && logs.Len() > 0 || !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("log = %q, want %q", logs.String(), tt.wantLog)
			}
		})
	}
}
