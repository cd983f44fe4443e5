package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"

	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/interceptors"
)

// Chain returns the client chain's config for this upstream: Resilience,
// plus what the upstream itself decides. A host:port list is served by a
// resolver Portico owns (reloadable, with ejection); one gRPC target such
// as dns:///inventory:43101 is used as is. The chain has no timeout of its
// own: the edge's route deadline (Timeout, routes.overrides, a client's
// Grpc-Timeout) is the one deadline of a call. Health checking is on by
// default at the edge, watching HealthService unless
// resilience.health_check names a service; health_check.enabled: false
// turns it off.
func (u UpstreamConfig) Chain() interceptors.Config {
	c := u.Resilience
	c.Name = u.Name
	c.Target, c.Addresses = "", nil
	if interceptors.HostPorts(u.Addresses) {
		c.Addresses = slices.Clone(u.Addresses)
	} else if len(u.Addresses) > 0 {
		c.Target = u.Addresses[0]
	}
	if c.Timeout == 0 {
		c.Timeout = interceptors.NoTimeout // the route's deadline alone
	}
	if c.HealthCheck.Enabled == nil {
		c.HealthCheck.Enabled = new(true)
		c.HealthCheck.Service = cmp.Or(c.HealthCheck.Service, u.HealthService)
	}
	return c
}

// validateResilience checks upstream i's resilience block: the keys the
// upstream owns must be absent, and the chain built from it must be valid.
// Errors name the field under upstreams[i].resilience.
func (u UpstreamConfig) validateResilience(v *validator, p string) {
	r := u.Resilience
	p += ".resilience"
	if r.Name != "" || r.Target != "" || len(r.Addresses) > 0 {
		v.add(p, "name, target and addresses come from the upstream, not its resilience block")
	}
	err := u.Chain().Validate()
	var fe *interceptors.FieldError
	for _, e := range unjoin(err) {
		if errors.As(e, &fe) {
			v.add(p+"."+fe.Field, "%s", fe.Msg)
		} else {
			v.add(p, "%v", e)
		}
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// NewUpstream builds the edge's client to one upstream: the one function
// for that role. Its interceptors are exactly the chain of package
// interceptors for up.Chain(), outermost first
//
//	trace -> deadline -> bulkhead -> breaker -> retry -> eject -> network
//
// (trace propagation is the chain's first layer and nowhere else), and its
// connection carries DialOptions (the answered stats handler). opts come
// after the config: logger, metrics, and for tests dial options.
func NewUpstream(up UpstreamConfig, opts ...interceptors.Option) (*interceptors.Upstream, error) {
	all := append([]interceptors.Option{interceptors.WithConfig(up.Chain())}, opts...)
	all = append(all, interceptors.WithDialOptions(DialOptions()...))
	creds, err := up.TLS.dialOptions() // after the chain's plaintext default, so it wins
	if err != nil {
		return nil, fmt.Errorf("upstream %s: tls: %w", up.Name, err)
	}
	all = append(all, interceptors.WithDialOptions(creds...))
	u, err := interceptors.NewUpstream("", all...)
	if err != nil {
		return nil, fmt.Errorf("upstream %s: %w", up.Name, err)
	}
	return u, nil
}

// Upstreams is the edge's set of client chains, one per upstream, made by
// its Dialer and kept by name so Reload can move their instances in place.
// Safe for concurrent use.
type Upstreams struct {
	opts []interceptors.Option

	mu sync.Mutex
	m  map[string]*interceptors.Upstream
}

// NewUpstreams returns an empty set whose chains get opts (typically
// interceptors.WithLogger and WithMetrics).
func NewUpstreams(opts ...interceptors.Option) *Upstreams {
	return &Upstreams{opts: opts, m: map[string]*interceptors.Upstream{}}
}

// Dialer returns the DialFunc that builds each upstream with NewUpstream
// and records it; pass it to WithDialer.
func (s *Upstreams) Dialer() DialFunc {
	return func(_ context.Context, up UpstreamConfig) (*grpc.ClientConn, error) {
		u, err := NewUpstream(up, s.opts...)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.m[up.Name] = u
		return u.Conn(), nil
	}
}

// Close closes every upstream: its connection (which Server.Close may have
// closed already) and any DNS refresher it runs.
func (s *Upstreams) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.m {
		_ = u.Close()
	}
}

// HealthTargets is the part of the edge that moves /health's checks
// (*Server).
type HealthTargets interface {
	SetUpstreamAddresses(name string, addrs []string) error
}

// Reload applies next over running, both validated configs, and returns
// the config now in effect. Only the instances of upstreams given as
// host:port lists change in place (API calls through the set, /health
// through health); every other difference is logged as needing a restart.
func (s *Upstreams) Reload(running, next Config, health HealthTargets, l *slog.Logger) Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	applied := running
	applied.Upstreams = slices.Clone(running.Upstreams)
	for i, cur := range applied.Upstreams {
		j := slices.IndexFunc(next.Upstreams, func(u UpstreamConfig) bool { return u.Name == cur.Name })
		if j < 0 || slices.Equal(cur.Addresses, next.Upstreams[j].Addresses) || s.m[cur.Name] == nil {
			continue
		}
		to := next.Upstreams[j].Addresses
		if err := s.move(cur, to, health); err != nil {
			l.Warn("reload: upstream addresses not changed", "upstream", cur.Name, "err", err.Error())
			continue
		}
		applied.Upstreams[i].Addresses = to
		l.Info("reload: upstream addresses changed", "upstream", cur.Name,
			"from", strings.Join(cur.Addresses, ","), "to", strings.Join(to, ","))
	}
	if !sameExceptAddresses(applied, next) {
		l.Warn("reload: only upstream addresses change without a restart; restart to apply the rest")
	}
	return applied
}

// move points upstream cur's API chain and /health at to: both or neither.
// If /health cannot move, the chain goes back to cur.Addresses, so the
// config Reload returns stays the one in effect and reverting the file
// later is a change again.
func (s *Upstreams) move(cur UpstreamConfig, to []string, health HealthTargets) error {
	if !interceptors.HostPorts(cur.Addresses) || !interceptors.HostPorts(to) {
		return errors.New("only a host:port list can change in place; restart to switch to or from a gRPC target")
	}
	up := s.m[cur.Name]
	if err := up.SetAddresses(to); err != nil {
		return err
	}
	if health == nil {
		return nil
	}
	herr := health.SetUpstreamAddresses(cur.Name, to)
	if herr == nil {
		return nil
	}
	// cur.Addresses were accepted when they were applied, so going back
	// cannot fail for the list's sake.
	if err := up.SetAddresses(cur.Addresses); err != nil {
		return fmt.Errorf("/health did not move (%w) and API calls could not move back: %w", herr, err)
	}
	return fmt.Errorf("/health could not move, so API calls stay on the old addresses: %w", herr)
}

// sameExceptAddresses reports whether a and b differ only in upstream
// addresses. Both are typed and defaulted, so deep equality is the
// semantic comparison.
func sameExceptAddresses(a, b Config) bool {
	strip := func(c Config) Config {
		c.Upstreams = slices.Clone(c.Upstreams)
		for i := range c.Upstreams {
			c.Upstreams[i].Addresses = nil
		}
		return c
	}
	return reflect.DeepEqual(strip(a), strip(b))
}
