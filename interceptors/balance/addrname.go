package balance

import (
	"net"
	"sync/atomic"
)

// addrNames caches the "host:port" text of attempts' peers. A peer's
// address is its connection's remote address: grpc-go hands every call on
// a connection the same *net.TCPAddr, which nothing changes once the
// connection is made, so its text is formatted once per connection rather
// than once per attempt. Reads take no lock: the map is replaced, never
// changed, and starts over past maxAddrNames entries (connections come and
// go; their addresses are dropped with the map).
type addrNames struct {
	m atomic.Pointer[map[*net.TCPAddr]string]
}

// maxAddrNames bounds the cache: far more connections than one upstream's
// instances keep open at once.
const maxAddrNames = 64

// name returns a.String(), from the cache for a TCP address.
func (c *addrNames) name(a net.Addr) string {
	t, ok := a.(*net.TCPAddr)
	if !ok || t == nil {
		return a.String()
	}
	old := c.m.Load()
	if old != nil {
		if s, ok := (*old)[t]; ok {
			return s
		}
	}
	s := t.String()
	next := map[*net.TCPAddr]string{t: s}
	if old != nil && len(*old) < maxAddrNames {
		for k, v := range *old {
			next[k] = v
		}
	}
	// Racing stores may drop an entry; it is formatted again next time.
	c.m.Store(&next)
	return s
}
