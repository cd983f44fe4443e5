package gateway

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"google.golang.org/grpc"
)

// probe is /health's own connection to one upstream, made by Dial outside
// the client chain (see dial). SetUpstreamAddresses replaces it when a
// reload moves the upstream, so /health keeps checking the instances API
// calls reach.
type probe struct {
	mu sync.Mutex
	up UpstreamConfig
	cc *grpc.ClientConn // nil once closed
}

var _ grpc.ClientConnInterface = (*probe)(nil)

func newProbe(ctx context.Context, up UpstreamConfig) (*probe, error) {
	cc, err := Dial(ctx, up)
	if err != nil {
		return nil, err
	}
	return &probe{up: up, cc: cc}, nil
}

func (p *probe) conn() (*grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cc == nil {
		return nil, grpc.ErrClientConnClosing
	}
	return p.cc, nil
}

// Invoke implements grpc.ClientConnInterface for the health client.
func (p *probe) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	cc, err := p.conn()
	if err != nil {
		return err
	}
	return cc.Invoke(ctx, method, args, reply, opts...)
}

// NewStream implements grpc.ClientConnInterface.
func (p *probe) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cc, err := p.conn()
	if err != nil {
		return nil, err
	}
	return cc.NewStream(ctx, desc, method, opts...)
}

// redial points the probe at addrs; a check in flight on the old
// connection fails (that one report says DOWN).
func (p *probe) redial(addrs []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cc == nil {
		return grpc.ErrClientConnClosing
	}
	up := p.up
	up.Addresses = slices.Clone(addrs)
	cc, err := Dial(context.Background(), up)
	if err != nil {
		return err
	}
	old := p.cc
	p.up, p.cc = up, cc
	return old.Close()
}

func (p *probe) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cc == nil {
		return nil
	}
	cc := p.cc
	p.cc = nil
	return cc.Close()
}

// SetUpstreamAddresses moves /health's checks of the named upstream to
// addrs. Upstreams.Reload calls it when a reload changes an upstream's
// addresses, beside moving the API connection (which the DialFunc owns), so
// /health checks the instances API calls reach. addrs follows
// UpstreamConfig.Addresses.
func (s *Server) SetUpstreamAddresses(name string, addrs []string) error {
	p, ok := s.probes[name]
	switch {
	case !ok:
		return fmt.Errorf("gateway: no upstream named %q", name)
	case len(addrs) == 0:
		return fmt.Errorf("gateway: upstream %s: no addresses", name)
	}
	if err := p.redial(addrs); err != nil {
		return fmt.Errorf("gateway: upstream %s: %w", name, err)
	}
	return nil
}
