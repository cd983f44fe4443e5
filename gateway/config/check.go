package config

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/portico-gateway/portico/interceptors/balance"
)

// Bounds of the semantic checks: values past them are mistakes, not
// tuning.
const (
	maxSaneAttempts     = 10
	maxSaneBodyBytes    = 64 << 20
	maxSaneHeaderBytes  = 1 << 20
	maxSaneRouteTimeout = 10 * time.Minute
	maxSaneCoolDown     = 10 * time.Minute
)

// metadataHosts are cloud instance-metadata endpoints: an upstream there
// would hand the instance's credentials to whoever calls the route.
var metadataHosts = []string{"metadata.google.internal", "metadata.goog", "metadata", "instance-data"}

// checkSemantics reports what is well-formed but wrong: upstream addresses
// that are link-local or cloud metadata, route timeouts a drain would cut,
// and breaker, retry and limit values that cannot work as meant. Parse
// runs it, so the gateway command, a reload and check-config agree.
//
// It runs beside the field checks, so a value those refuse (a negative
// shutdown_grace, an upstream's timeout) is not compared as well: one
// reason per mistake.
func (c Config) checkSemantics(v *validator) {
	graceOK := c.ShutdownGrace >= 0 && c.ShutdownGrace <= MaxShutdownGrace
	for i, u := range c.Upstreams {
		p := fmt.Sprintf("upstreams[%d]", i)
		for j, a := range u.Addresses {
			if why := badAddress(a); why != "" {
				v.add(fmt.Sprintf("%s.addresses[%d]", p, j), "%q %s", a, why)
			}
		}
		c.checkChain(v, p, u)
		if graceOK && u.Timeout > c.ShutdownGrace {
			v.add(p+".timeout", "%v is longer than shutdown_grace %v: a drain would cut these requests", u.Timeout, c.ShutdownGrace)
		}
	}
	for _, k := range sortedKeys(c.Routes.Overrides) {
		if t := c.Routes.Overrides[k].Timeout; graceOK && t > c.ShutdownGrace {
			v.add(fmt.Sprintf("routes.overrides[%q].timeout", k), "%v is longer than shutdown_grace %v: a drain would cut these requests", t, c.ShutdownGrace)
		}
	}
	if c.Routes.MaxTimeout > maxSaneRouteTimeout {
		v.add("routes.max_timeout", "%v is over %v: hold long work in a job, not a request", c.Routes.MaxTimeout, maxSaneRouteTimeout)
	}
	if c.Routes.MaxBodyBytes > maxSaneBodyBytes {
		v.add("routes.max_body_bytes", "%d is over %d: the edge buffers bodies in memory", c.Routes.MaxBodyBytes, maxSaneBodyBytes)
	}
	if c.HTTP.MaxHeaderBytes > maxSaneHeaderBytes {
		v.add("http.max_header_bytes", "%d is over %d", c.HTTP.MaxHeaderBytes, maxSaneHeaderBytes)
	}
}

// checkChain checks one upstream's retry, breaker and bulkhead against
// its timeout.
func (c Config) checkChain(v *validator, p string, u UpstreamConfig) {
	r := u.Resilience
	p += ".resilience"
	if r.Retry.MaxAttempts > maxSaneAttempts {
		v.add(p+".retry.max_attempts", "%d attempts multiply load on a failing upstream; at most %d", r.Retry.MaxAttempts, maxSaneAttempts)
	}
	if u.Timeout > 0 && r.Retry.AttemptTimeout > 0 && r.Retry.AttemptTimeout >= u.Timeout {
		v.add(p+".retry.attempt_timeout", "%v is not shorter than the upstream's timeout %v: no retry could ever run", r.Retry.AttemptTimeout, u.Timeout)
	}
	if u.Timeout > 0 && r.Retry.InitialBackoff > 0 && r.Retry.InitialBackoff >= u.Timeout {
		v.add(p+".retry.initial_backoff", "%v is not shorter than the upstream's timeout %v: no retry could ever run", r.Retry.InitialBackoff, u.Timeout)
	}
	if u.Timeout > 0 && r.MinBudget > 0 && r.MinBudget >= u.Timeout {
		v.add(p+".min_budget", "%v is not shorter than the upstream's timeout %v: every call would fail before it is sent", r.MinBudget, u.Timeout)
	}
	if r.Breaker.CoolDown > maxSaneCoolDown {
		v.add(p+".breaker.cool_down", "%v is over %v: a recovered upstream would stay cut off", r.Breaker.CoolDown, maxSaneCoolDown)
	}
	if u.Timeout > 0 && r.Breaker.SlowCallThreshold > 0 && r.Breaker.SlowCallThreshold >= u.Timeout {
		v.add(p+".breaker.slow_call_threshold", "%v is not shorter than the upstream's timeout %v: no call could count as slow", r.Breaker.SlowCallThreshold, u.Timeout)
	}
	if u.Timeout > 0 && r.Bulkhead.MaxWait > 0 && r.Bulkhead.MaxWait >= u.Timeout {
		v.add(p+".bulkhead.max_wait", "%v is not shorter than the upstream's timeout %v: a queued call would spend its whole deadline waiting", r.Bulkhead.MaxWait, u.Timeout)
	}
}

// badAddress says why an upstream address must not be used, or "": the
// host of host:port or of a dns:/// target may not be link-local,
// unspecified or a cloud metadata endpoint (169.254.169.254,
// fd00:ec2::254, metadata.google.internal). Whether the address can be
// dialled at all (its form, its port, its scheme) is
// interceptors.CheckAddresses's, which the field checks run; another
// resolver's target has no host to judge here.
func badAddress(a string) string {
	hp := a
	if host, port, ok := balance.ParseDNSTarget(a); ok {
		hp = net.JoinHostPort(host, port)
	}
	host, _, err := net.SplitHostPort(hp)
	if err != nil || strings.Contains(hp, "/") {
		return ""
	}
	for _, m := range metadataHosts {
		if strings.EqualFold(strings.TrimSuffix(host, "."), m) {
			return "is a cloud metadata endpoint"
		}
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	ip = ip.Unmap()
	switch {
	case ip == netip.MustParseAddr("169.254.169.254") || ip == netip.MustParseAddr("fd00:ec2::254"):
		return "is a cloud metadata endpoint"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "is link-local"
	case ip.IsUnspecified():
		return "is unspecified (0.0.0.0 or ::); name the host"
	case ip.IsMulticast():
		return "is multicast"
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
