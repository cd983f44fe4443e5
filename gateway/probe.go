package gateway

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	"github.com/portico-gateway/portico/gateway/config"
)

// probe is /health's own connection to one upstream, made by Dial outside
// the client chain. It lives and dies with the upstream's API connection
// (upstreamConn), so /health checks the instances API calls reach.
type probe struct {
	mu sync.Mutex
	up config.UpstreamConfig
	cc *grpc.ClientConn // nil once closed
}

var _ grpc.ClientConnInterface = (*probe)(nil)

func newProbe(ctx context.Context, up config.UpstreamConfig) (*probe, error) {
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

// awaitReady reports whether the API connection can carry a call now. One in
// reconnect backoff (say the upstream started after the edge dialled it)
// is told to retry at once, and awaitReady waits, until ctx ends, for it to
// become ready: so /health is UP only when API calls would get through,
// and polling it ends the backoff the moment the upstream answers.
func (uc *upstreamConn) awaitReady(ctx context.Context) bool {
	for {
		st := uc.cc.GetState()
		switch st {
		case connectivity.Ready:
			return true
		case connectivity.Shutdown:
			return false
		case connectivity.TransientFailure:
			uc.cc.ResetConnectBackoff()
		case connectivity.Idle:
			uc.cc.Connect()
		}
		if !uc.cc.WaitForStateChange(ctx, st) {
			return false
		}
	}
}
