package gateway

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/inflight"
	"github.com/portico-gateway/portico/interceptors"
)

// NewUpstream builds the edge's client to one upstream: the one function
// for that role. Its interceptors are exactly the chain of package
// interceptors for up.Chain(), outermost first
//
//	trace -> deadline -> bulkhead -> breaker -> retry -> eject -> network
//
// (trace propagation is the chain's first layer and nowhere else), and its
// connection carries DialOptions (the answered stats handler). opts come
// after the config: logger, metrics, and for tests dial options.
func NewUpstream(up config.UpstreamConfig, opts ...interceptors.Option) (*interceptors.Upstream, error) {
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
func upstreamOptions(up config.UpstreamConfig, cfg interceptors.Config, opts ...interceptors.Option) ([]interceptors.Option, error) {
	all := append([]interceptors.Option{interceptors.WithConfig(cfg)}, opts...)
	all = append(all, interceptors.WithDialOptions(DialOptions()...))
	creds, err := up.TLS.DialOptions()
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
	return func(_ context.Context, up config.UpstreamConfig) (*grpc.ClientConn, error) {
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
