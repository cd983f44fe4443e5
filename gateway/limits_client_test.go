package gateway

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/config"
)

func TestClientAddr(t *testing.T) {
	behind := newClients(config.ClientsConfig{TrustedProxies: []string{"10.0.0.0/8", "2001:db8:ffff::/48"}})
	direct := newClients(config.ClientsConfig{})
	tests := []struct {
		name   string
		c      clients
		remote string
		xff    []string
		want   string
	}{
		{"ipv4 peer", direct, "192.0.2.7:5000", nil, "192.0.2.7"},
		{"ipv6 peer grouped by /64", direct, "[2001:db8:1:2:aaaa::1]:5000", nil, "2001:db8:1:2::/64"},
		{"same /64, same key", direct, "[2001:db8:1:2:bbbb::9]:5000", nil, "2001:db8:1:2::/64"},
		{"ipv4-mapped ipv6", direct, "[::ffff:192.0.2.7]:5000", nil, "192.0.2.7"},
		{"forwarded header ignored without trusted proxies", direct, "192.0.2.7:5000", []string{"198.51.100.1"}, "192.0.2.7"},
		{"untrusted peer's header ignored", behind, "192.0.2.7:5000", []string{"198.51.100.1"}, "192.0.2.7"},
		{"trusted proxy", behind, "10.1.2.3:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"rightmost untrusted wins", behind, "10.1.2.3:5000", []string{"203.0.113.9, 198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"several header lines", behind, "10.1.2.3:5000", []string{"203.0.113.9", "198.51.100.1"}, "198.51.100.1"},
		{"ipv6 client behind a proxy", behind, "[2001:db8:ffff::1]:5000", []string{"2001:db8:5:6::7"}, "2001:db8:5:6::/64"},
		{"garbage stops the walk", behind, "10.1.2.3:5000", []string{"203.0.113.9, not-an-ip"}, "10.1.2.3"},
		{"only proxies", behind, "10.1.2.3:5000", []string{"10.4.4.4"}, "10.4.4.4"},
		{"unparsable peer", direct, "pipe", nil, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tt.remote, Header: http.Header{}}
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := tt.c.addr(r); got != tt.want {
				t.Errorf("addr(%s, %v) = %s, want %s", tt.remote, tt.xff, got, tt.want)
			}
		})
	}
}

func TestClientID(t *testing.T) {
	trusted := newClients(config.ClientsConfig{ClientIDHeader: "X-Client-Id"})
	tests := []struct {
		name string
		c    clients
		vals []string
		want string
	}{
		{"untrusted header never counts", newClients(config.ClientsConfig{}), []string{"app-1"}, ""},
		{"trusted", trusted, []string{"app-1"}, "app-1"},
		{"repeated", trusted, []string{"app-1", "app-2"}, ""},
		{"control character", trusted, []string{"app\x01"}, ""},
		{"too long", trusted, []string{strings.Repeat("a", maxClientIDLen+1)}, ""},
	}
	for _, tt := range tests {
		r := &http.Request{Header: http.Header{}}
		for _, v := range tt.vals {
			r.Header.Add("X-Client-Id", v)
		}
		if got := tt.c.clientID(r); got != tt.want {
			t.Errorf("%s: clientID(%q) = %q, want %q", tt.name, tt.vals, got, tt.want)
		}
	}
}

// FuzzClientAddr: any peer and X-Forwarded-For give an address, a /64 or
// "unknown", never a panic.
func FuzzClientAddr(f *testing.F) {
	f.Add("10.1.2.3:5000", "203.0.113.9, 198.51.100.1")
	f.Add("[2001:db8::1]:1", "2001:db8:5:6::7,, ,")
	f.Add("x", "")
	c := newClients(config.ClientsConfig{TrustedProxies: []string{"10.0.0.0/8", "2001:db8::/32"}})
	f.Fuzz(func(t *testing.T, remote, xff string) {
		r := &http.Request{RemoteAddr: remote, Header: http.Header{"X-Forwarded-For": {xff}}}
		got := c.addr(r)
		if _, err := netip.ParseAddr(got); err != nil && got != "unknown" {
			if _, err := netip.ParsePrefix(got); err != nil {
				t.Errorf("addr(%q, %q) = %q: neither an address, a prefix nor unknown", remote, xff, got)
			}
		}
	})
}
