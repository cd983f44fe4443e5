package deploy

import (
	"net"
	"strconv"
	"testing"

	"github.com/portico-gateway/portico/gateway/config"
)

// contractPorts is each process's port, read from the gateway's constants
// (the edge's DefaultListen; the dev profile puts inventory, payment and
// order on the next three ports), never copied.
func contractPorts(t *testing.T) map[string]int {
	t.Helper()
	edge := portOf(t, config.DefaultListen)
	out := map[string]int{"edge": edge}
	for _, u := range config.Dev(edge).Upstreams {
		out[u.Name] = portOf(t, u.Addresses[0])
	}
	return out
}

func portOf(t *testing.T, hostport string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatalf("SplitHostPort(%q): %v", hostport, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("port of %q: %v", hostport, err)
	}
	return n
}
