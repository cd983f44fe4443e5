package balance

import (
	"net"
	"net/netip"
	"testing"
)

type unixish struct{ s string }

func (u unixish) Network() string { return "test" }
func (u unixish) String() string  { return u.s }

// TestAddrNames: the cached text is always Addr.String(): per connection
// (one *net.TCPAddr), for every other kind of address, and after the
// cache starts over.
func TestAddrNames(t *testing.T) {
	v4 := net.TCPAddrFromAddrPort(netip.MustParseAddrPort("10.0.0.7:8081"))
	v6 := net.TCPAddrFromAddrPort(netip.MustParseAddrPort("[fe80::1]:443"))
	var nilTCP *net.TCPAddr
	tests := []struct {
		name string
		addr net.Addr
		want string
	}{
		{"tcp v4", v4, "10.0.0.7:8081"},
		{"tcp v4 again", v4, "10.0.0.7:8081"},
		{"tcp v6", v6, "[fe80::1]:443"},
		{"same text, another connection", net.TCPAddrFromAddrPort(netip.MustParseAddrPort("10.0.0.7:8081")), "10.0.0.7:8081"},
		{"not tcp", unixish{"bufnet"}, "bufnet"},
		{"nil tcp", nilTCP, nilTCP.String()},
	}
	var c addrNames
	for _, tt := range tests {
		if got := c.name(tt.addr); got != tt.want {
			t.Errorf("%s: name = %q, want %q", tt.name, got, tt.want)
		}
	}
	if n := len(*c.m.Load()); n != 3 {
		t.Errorf("cached %d addresses, want the 3 TCP ones", n)
	}
	for i := range maxAddrNames + 1 {
		c.name(&net.TCPAddr{IP: net.IPv4(10, 0, 1, byte(i)), Port: 1})
	}
	if n := len(*c.m.Load()); n > maxAddrNames {
		t.Errorf("cached %d addresses, want at most %d", n, maxAddrNames)
	}
	if got := c.name(v4); got != "10.0.0.7:8081" {
		t.Errorf("after the cache started over: name = %q", got)
	}
}

func BenchmarkAddrName(b *testing.B) {
	a := net.TCPAddrFromAddrPort(netip.MustParseAddrPort("10.0.0.7:8081"))
	var c addrNames
	b.ReportAllocs()
	for b.Loop() {
		_ = c.name(a)
	}
}
