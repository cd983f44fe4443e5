package inflight

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
)

// Counter counts calls in flight per remote address. Build it with New.
type Counter struct {
	mu sync.Mutex // serialises adding an address
	m  atomic.Pointer[map[netip.AddrPort]*atomic.Int64]
}

var _ stats.Handler = (*Counter)(nil)

// New returns an empty Counter.
func New() *Counter {
	c := &Counter{}
	c.m.Store(&map[netip.AddrPort]*atomic.Int64{})
	return c
}

// InFlight returns the calls in flight to addr ("ip:port"); ok is false
// when addr is not an IP:port.
func (c *Counter) InFlight(addr string) (n int64, ok bool) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return 0, false
	}
	if v := (*c.m.Load())[unmap(ap)]; v != nil {
		return v.Load(), true
	}
	return 0, true
}

// HandleRPC counts a client attempt from its stream's OutHeader to its End.
func (c *Counter) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch ev := s.(type) {
	case *stats.OutHeader:
		if !ev.Client {
			return
		}
		if ap, ok := addrPort(ev.RemoteAddr); ok {
			c.counter(ap).Add(1)
		}
	case *stats.End:
		if !ev.Client {
			return
		}
		// The context of an attempt that opened a stream carries its
		// transport's peer: the address OutHeader counted.
		p, ok := peer.FromContext(ctx)
		if !ok {
			return
		}
		if ap, ok := addrPort(p.Addr); ok {
			if v := (*c.m.Load())[ap]; v != nil {
				v.Add(-1)
			}
		}
	}
}

// counter returns ap's counter, adding it when new.
func (c *Counter) counter(ap netip.AddrPort) *atomic.Int64 {
	if v := (*c.m.Load())[ap]; v != nil {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.m.Load()
	if v := old[ap]; v != nil {
		return v
	}
	next := make(map[netip.AddrPort]*atomic.Int64, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	v := new(atomic.Int64)
	next[ap] = v
	c.m.Store(&next)
	return v
}

func addrPort(a net.Addr) (netip.AddrPort, bool) {
	t, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}, false
	}
	return unmap(t.AddrPort()), true
}

func unmap(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// TagRPC implements stats.Handler; it adds nothing to the context.
func (c *Counter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

// TagConn implements stats.Handler.
func (c *Counter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

// HandleConn implements stats.Handler.
func (c *Counter) HandleConn(context.Context, stats.ConnStats) {}
