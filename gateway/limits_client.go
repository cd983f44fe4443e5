package gateway

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/portico-gateway/portico/gateway/config"
)

// maxForwardedHops bounds how many X-Forwarded-For entries are read.
const maxForwardedHops = 16

// maxClientIDLen bounds a trusted client id; a longer one is ignored.
const maxClientIDLen = 128

// clients finds the client address and the trusted client id of a
// request (LimitsConfig.Clients).
type clients struct {
	proxies  []netip.Prefix
	idHeader string
}

func newClients(c config.ClientsConfig) clients {
	cl := clients{idHeader: c.ClientIDHeader}
	for _, p := range c.TrustedProxies {
		if pfx, err := netip.ParsePrefix(p); err == nil { // validated in Config.Validate
			cl.proxies = append(cl.proxies, pfx.Masked())
		}
	}
	return cl
}

// addr returns the client's address as a key: the socket peer or, when the
// peer is a trusted proxy, the rightmost X-Forwarded-For address that is not
// one (a client can prepend anything to the header, but not past the
// proxies). An IPv6 address stands for its /64, which one host usually
// holds whole; an unparsable peer is "unknown".
func (c clients) addr(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return "unknown"
	}
	a := ap.Addr().Unmap()
	if c.trusted(a) {
		a = c.forwarded(r, a)
	}
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

func (c clients) trusted(a netip.Addr) bool {
	for _, p := range c.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwarded walks X-Forwarded-For from the right, past trusted proxies; a
// malformed entry ends the walk at the last good address.
func (c clients) forwarded(r *http.Request, peer netip.Addr) netip.Addr {
	vals := r.Header.Values("X-Forwarded-For")
	hops := 0
	for i := len(vals) - 1; i >= 0; i-- {
		parts := strings.Split(vals[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			if hops++; hops > maxForwardedHops {
				return peer
			}
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return peer
			}
			peer = a.Unmap()
			if !c.trusted(peer) {
				return peer
			}
		}
	}
	return peer
}

// clientID returns the trusted client id header's value, or "" when the
// header is not configured, absent, repeated, too long or not printable
// ASCII.
func (c clients) clientID(r *http.Request) string {
	if c.idHeader == "" {
		return ""
	}
	vs := r.Header.Values(c.idHeader)
	if len(vs) != 1 || vs[0] == "" || len(vs[0]) > maxClientIDLen {
		return ""
	}
	for i := 0; i < len(vs[0]); i++ {
		if vs[0][i] <= ' ' || vs[0][i] > '~' {
			return ""
		}
	}
	return vs[0]
}
