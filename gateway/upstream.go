package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/gateway/inflight"
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
	all, err := upstreamOptions(up, up.Chain(), opts...)
	if err != nil {
		return nil, err
	}
	u, err := interceptors.NewUpstream("", all...)
	if err != nil {
		return nil, fmt.Errorf("upstream %s: %w", up.Name, err)
	}
	return u, nil
}

// upstreamOptions are the options of every connection the edge makes to
// up, with the chain (NewUpstream) or without its resilience (Dial): cfg
// (up.Chain(), or Dial's variant of it), then opts, then DialOptions and
// the upstream's TLS credentials (after the builder's plaintext default,
// so they win).
func upstreamOptions(up UpstreamConfig, cfg interceptors.Config, opts ...interceptors.Option) ([]interceptors.Option, error) {
	all := append([]interceptors.Option{interceptors.WithConfig(cfg)}, opts...)
	all = append(all, interceptors.WithDialOptions(DialOptions()...))
	creds, err := up.TLS.dialOptions()
	if err != nil {
		return nil, fmt.Errorf("upstream %s: tls: %w", up.Name, err)
	}
	return append(all, interceptors.WithDialOptions(creds...)), nil
}

// Upstreams is the edge's set of client chains, one per upstream
// connection, made by its Dialer. Pass it to New WithUpstreams: the edge
// then releases a chain (its connection and any DNS refresher) when the
// last config using it drains, and reads its state for the admin API. Safe
// for concurrent use.
type Upstreams struct {
	opts []interceptors.Option

	mu    sync.Mutex
	m     map[*grpc.ClientConn]*interceptors.Upstream
	calls map[*grpc.ClientConn]*inflight.Counter // per instance, for the admin API
}

// NewUpstreams returns an empty set whose chains get opts (typically
// interceptors.WithLogger and WithMetrics).
func NewUpstreams(opts ...interceptors.Option) *Upstreams {
	return &Upstreams{opts: opts, m: map[*grpc.ClientConn]*interceptors.Upstream{}, calls: map[*grpc.ClientConn]*inflight.Counter{}}
}

// Dialer returns the DialFunc that builds each upstream with NewUpstream,
// its connection counting calls in flight per instance (an
// inflight.Counter), and records it.
func (s *Upstreams) Dialer() DialFunc {
	return func(_ context.Context, up UpstreamConfig) (*grpc.ClientConn, error) {
		calls := inflight.New()
		opts := append(slices.Clip(s.opts), interceptors.WithDialOptions(grpc.WithStatsHandler(calls)))
		u, err := NewUpstream(up, opts...)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.m[u.Conn()], s.calls[u.Conn()] = u, calls
		return u.Conn(), nil
	}
}

// lookup returns the chain that owns cc, or nil.
func (s *Upstreams) lookup(cc *grpc.ClientConn) *interceptors.Upstream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[cc]
}

// inFlight returns the per-instance call counter of cc's chain, or nil.
func (s *Upstreams) inFlight(cc *grpc.ClientConn) *inflight.Counter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[cc]
}

// release closes the chain that owns cc and forgets it.
func (s *Upstreams) release(cc *grpc.ClientConn) error {
	s.mu.Lock()
	u, ok := s.m[cc]
	delete(s.m, cc)
	delete(s.calls, cc)
	s.mu.Unlock()
	if !ok {
		return cc.Close()
	}
	return u.Close()
}

// Close closes every chain still open: its connection (which the edge may
// have closed already) and any DNS refresher it runs.
func (s *Upstreams) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cc, u := range s.m {
		_ = u.Close()
		delete(s.m, cc)
		delete(s.calls, cc)
	}
}
