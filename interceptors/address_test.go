package interceptors_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/interceptors"
)

func TestCheckAddresses(t *testing.T) {
	tests := []struct {
		name  string
		addrs []string
		want  []string // per refused entry: "index:substring of its message"; nil means valid
	}{
		{"one host:port", []string{"127.0.0.1:43101"}, nil},
		{"IPv6", []string{"[::1]:43101"}, nil},
		{"several", []string{"10.0.0.1:1", "inventory:65535", "[::1]:2"}, nil},
		{"dns target", []string{"dns:///inventory:43101"}, nil},
		{"unix target", []string{"unix:///tmp/inventory.sock"}, nil},
		{"passthrough target", []string{"passthrough:///inventory:43101"}, nil},
		{"empty list", nil, nil},
		{"unknown scheme", []string{"foo://bar"}, []string{`0:no resolver for scheme "foo"`}},
		{"http URL", []string{"http://127.0.0.1:31001"}, []string{`0:no resolver for scheme "http"`}},
		{"dns without name or port", []string{"dns:///"}, []string{`0:"dns:///" is not host:port`}},
		{"dns without port: gRPC dials 443", []string{"dns:///inventory"}, nil},
		{"unix socket, relative", []string{"unix:inventory.sock"}, nil},
		{"unix abstract socket", []string{"unix-abstract:inventory"}, nil},
		{"named port", []string{"localhost:http"}, nil},
		{"dns with a name server", []string{"dns://8.8.8.8/inventory:43101"}, nil},
		{"dns without name", []string{"dns:///:43101"}, []string{`0:"dns:///:43101" has no host`}},
		{"dns port out of range", []string{"dns:///localhost:99999"}, []string{`0:"dns:///localhost:99999" has port "99999"; want a port of 1-65535`}},
		{"port not a number", []string{"localhost:abc"}, []string{`0:"localhost:abc" has port "abc"`}},
		{"port 0", []string{"localhost:0"}, []string{`0:has port "0"`}},
		{"signed port", []string{"localhost:+80"}, []string{`0:has port "+80"`}},
		{"no port", []string{"inventory"}, []string{`0:"inventory" is not host:port`}},
		{"no host", []string{":43101"}, []string{`0:has no host`}},
		{"space inside", []string{" 127.0.0.1:1"}, []string{`0:is not host:port`}},
		{"empty entry", []string{""}, []string{"0:must not be empty"}},
		{"every bad entry of a list", []string{"127.0.0.1:1", "", "dns:///inventory:1", "a:99999"},
			[]string{"1:must not be empty", "2:with several addresses each must be host:port", `3:has port "99999"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := interceptors.CheckAddresses(tt.addrs)
			var got []*interceptors.AddressError
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var ae *interceptors.AddressError
					if !errors.As(e, &ae) {
						t.Fatalf("CheckAddresses(%q) joined %T, want *AddressError", tt.addrs, e)
					}
					got = append(got, ae)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("CheckAddresses(%q) = %v, want %d errors %q", tt.addrs, err, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				idx, msg, _ := strings.Cut(w, ":")
				if g := got[i]; idx != strconv.Itoa(g.Index) || !strings.Contains(g.Msg, msg) || g.Addr != tt.addrs[g.Index] {
					t.Errorf("CheckAddresses(%q) error %d = %d %q %q, want %s", tt.addrs, i, g.Index, g.Addr, g.Msg, w)
				}
			}
		})
	}
}

func TestHostPorts(t *testing.T) {
	tests := []struct {
		name  string
		addrs []string
		want  bool
	}{
		{"one host:port", []string{"127.0.0.1:43101"}, true},
		{"several", []string{"10.0.0.1:1", "inventory:2"}, true},
		{"dns target", []string{"dns:///inventory:43101"}, false},
		{"no port", []string{"inventory"}, false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := interceptors.HostPorts(tt.addrs); got != tt.want {
				t.Errorf("HostPorts(%q) = %v, want %v", tt.addrs, got, tt.want)
			}
		})
	}
}
