package cli

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/interceptors"
)

// upstreamSet remembers the edge's upstreams by name so a reload can change
// their instances in place, for API calls and for /health.
type upstreamSet struct {
	mu     sync.Mutex
	m      map[string]*interceptors.Upstream
	health healthTargets
}

// closeAll closes every upstream: its connection (which the edge may have
// closed already) and any DNS refresher it runs.
func (s *upstreamSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.m {
		_ = u.Close()
	}
}

// healthTargets is the part of the edge that moves /health's checks
// (*gateway.Server).
type healthTargets interface {
	SetUpstreamAddresses(name string, addrs []string) error
}

func (s *upstreamSet) add(name string, u *interceptors.Upstream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*interceptors.Upstream{}
	}
	s.m[name] = u
}

// reloadOnHangup re-reads the config at path on every signal on hup until
// ctx ends, and applies what can change without a restart: the instances of
// upstreams given as host:port lists. An invalid file is logged and
// ignored (the running config stays); any other change is logged as
// needing a restart.
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, path string, running gateway.Config, ups *upstreamSet, l *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			next, err := loadGatewayConfig(path)
			if err != nil {
				l.Error("reload rejected; keeping the running config", "err", err.Error())
				continue
			}
			running = applyReload(running, next, ups, l)
		}
	}
}

// applyReload moves every upstream whose addresses changed to its new list
// and returns the config now in effect.
func applyReload(running, next gateway.Config, ups *upstreamSet, l *slog.Logger) gateway.Config {
	ups.mu.Lock()
	defer ups.mu.Unlock()
	applied := running
	applied.Upstreams = slices.Clone(running.Upstreams)
	for i, cur := range applied.Upstreams {
		j := slices.IndexFunc(next.Upstreams, func(u gateway.UpstreamConfig) bool { return u.Name == cur.Name })
		if j < 0 || slices.Equal(cur.Addresses, next.Upstreams[j].Addresses) {
			continue
		}
		u := ups.m[cur.Name]
		if u == nil {
			continue
		}
		if !hostPorts(cur.Addresses) || !hostPorts(next.Upstreams[j].Addresses) {
			l.Warn("reload: only a host:port list can change in place; restart to switch to or from a gRPC target",
				"upstream", cur.Name)
			continue
		}
		if err := u.SetAddresses(next.Upstreams[j].Addresses); err != nil {
			l.Error("reload: addresses not changed", "upstream", cur.Name, "err", err.Error())
			continue
		}
		if ups.health != nil {
			if err := ups.health.SetUpstreamAddresses(cur.Name, next.Upstreams[j].Addresses); err != nil {
				l.Error("reload: /health still checks the old addresses", "upstream", cur.Name, "err", err.Error())
			}
		}
		applied.Upstreams[i].Addresses = next.Upstreams[j].Addresses
		l.Info("reload: upstream addresses changed", "upstream", cur.Name,
			"from", strings.Join(cur.Addresses, ","), "to", strings.Join(next.Upstreams[j].Addresses, ","))
	}
	if !sameExceptAddresses(applied, next) {
		l.Warn("reload: only upstream addresses change without a restart; restart to apply the rest")
	}
	return applied
}

// sameExceptAddresses reports whether a and b differ only in upstream
// addresses (compared through their YAML form).
func sameExceptAddresses(a, b gateway.Config) bool {
	strip := func(c gateway.Config) string {
		c.Upstreams = slices.Clone(c.Upstreams)
		for i := range c.Upstreams {
			c.Upstreams[i].Addresses = nil
		}
		out, _ := yamlString(c)
		return out
	}
	return strip(a) == strip(b)
}
