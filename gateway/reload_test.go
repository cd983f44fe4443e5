package gateway

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/interceptors"
)

// healthMoves records /health's moves, or refuses every one with fail.
type healthMoves struct {
	moved map[string][]string
	fail  error
}

func (h *healthMoves) SetUpstreamAddresses(name string, addrs []string) error {
	if h.fail != nil {
		return h.fail
	}
	h.moved[name] = addrs
	return nil
}

func TestUpstreamsReload(t *testing.T) {
	base := DevConfig(43100)
	base.Upstreams[2].Addresses = []string{"dns:///order:43103"}
	tests := []struct {
		name       string
		edit       func(*Config)
		healthFail error    // what /health answers to a move
		wantInv    []string // inventory's addresses in effect: the config's and the chain's
		wantMove   bool     // /health moved for inventory
		wantLog    string   // substring of the log; "" means nothing logged
	}{
		{"nothing changed", func(*Config) {}, nil, []string{"127.0.0.1:43101"}, false, ""},
		{"instances change in place", func(c *Config) {
			c.Upstreams[0].Addresses = []string{"127.0.0.1:1", "127.0.0.1:2"}
		}, nil, []string{"127.0.0.1:1", "127.0.0.1:2"}, true, "upstream addresses changed"},
		{"a /health that cannot move keeps the API chain where it was", func(c *Config) {
			c.Upstreams[0].Addresses = []string{"127.0.0.1:1", "127.0.0.1:2"}
		}, errors.New("probe redial failed"), []string{"127.0.0.1:43101"}, false, "probe redial failed"},
		{"other fields need a restart", func(c *Config) {
			c.Health.Timeout = time.Second
		}, nil, []string{"127.0.0.1:43101"}, false, "restart to apply the rest"},
		{"a resilience change needs a restart", func(c *Config) {
			c.Upstreams[0].Resilience.Retry.MaxAttempts = 1
		}, nil, []string{"127.0.0.1:43101"}, false, "restart to apply the rest"},
		{"a gRPC target cannot change in place", func(c *Config) {
			c.Upstreams[2].Addresses = []string{"127.0.0.1:3"}
		}, nil, []string{"127.0.0.1:43101"}, false, "only a host:port list can change in place"},
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
			moves := &healthMoves{moved: map[string][]string{}, fail: tt.healthFail}
			got := ups.Reload(base, next, moves, slog.New(slog.NewTextHandler(&logs, nil)))
			if !slices.Equal(got.Upstreams[0].Addresses, tt.wantInv) {
				t.Errorf("inventory addresses in the returned config = %v, want %v", got.Upstreams[0].Addresses, tt.wantInv)
			}
			if chain := ups.m["inventory"].Addresses(); !slices.Equal(chain, tt.wantInv) {
				t.Errorf("inventory's API chain resolves to %v, want %v", chain, tt.wantInv)
			}
			if _, moved := moves.moved["inventory"]; moved != tt.wantMove {
				t.Errorf("/health moved = %v, want %v", moved, tt.wantMove)
			}
			if tt.wantLog == "" && logs.Len() > 0 || !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("log = %q, want %q", logs.String(), tt.wantLog)
			}
		})
	}
}
