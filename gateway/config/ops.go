package config

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// DefaultWatchInterval is how often the edge polls its config file for a
// change when ops.watch_interval is zero.
const DefaultWatchInterval = 2 * time.Second

// MinWatchInterval is the shortest ops.watch_interval: a shorter poll
// (1ns loaded) re-reads and hashes the file in a loop and takes a CPU.
const MinWatchInterval = 10 * time.Millisecond

// OpsConfig configures how the edge is operated: reloads, kept versions
// and readiness. Every field's zero value is the documented default; the
// whole section absent is the old behaviour plus file watching.
type OpsConfig struct {
	// WatchInterval is how often the gateway command polls the config
	// file's content hash; a change seen on two polls in a row (so a file
	// being written is never read half-done) is reloaded. The directory's
	// entries are re-resolved each poll, so Kubernetes' ConfigMap symlink
	// swap is seen. Zero means DefaultWatchInterval; negative turns
	// watching off (SIGHUP and the admin API still reload). A reload that
	// changes it restarts the polling with the new interval.
	WatchInterval time.Duration `yaml:"watch_interval,omitempty"`
	// KeepVersions is how many applied configs the edge keeps for
	// rollback, the live one included. Zero means DefaultKeepVersions;
	// negative is an error.
	KeepVersions int `yaml:"keep_versions,omitempty"`
	// ReadyRequires names upstreams of which at least one instance must be
	// usable (its connection READY or IDLE) for /healthz/ready to answer
	// 200. Empty means readiness never depends on upstreams.
	ReadyRequires []string `yaml:"ready_requires,omitempty"`
}

// validateOps checks admin_listen and the ops section.
func (c Config) validateOps(v *validator) {
	if c.AdminListen != "" {
		_, port, err := net.SplitHostPort(c.AdminListen)
		if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil {
			v.add("admin_listen", "want host:port with a port of 0-65535, got %q", c.AdminListen)
		} else if c.AdminListen == c.Listen && port != "0" {
			v.add("admin_listen", "must differ from listen %q", c.Listen)
		}
	}
	if w := c.Ops.WatchInterval; w > 0 && w < MinWatchInterval {
		v.add("ops.watch_interval", "want at least %v (negative: no watching), got %v", MinWatchInterval, w)
	}
	if c.Ops.KeepVersions < 0 {
		v.add("ops.keep_versions", "must not be negative, got %d", c.Ops.KeepVersions)
	}
	names := map[string]bool{}
	for _, u := range c.Upstreams {
		names[u.Name] = true
	}
	for i, n := range c.Ops.ReadyRequires {
		if !names[n] {
			v.add(fmt.Sprintf("ops.ready_requires[%d]", i), "no upstream named %q", n)
		}
	}
}

// LongestTimeout is the longest route deadline the config sets: an
// upstream's timeout or a route override's. The default shutdown grace
// exceeds it, so a drain never cuts a request within its deadline.
func (c Config) LongestTimeout() time.Duration {
	var d time.Duration
	for _, u := range c.Upstreams {
		d = max(d, u.Timeout)
	}
	for _, o := range c.Routes.Overrides {
		d = max(d, o.Timeout)
	}
	return d
}
