package interceptors

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"google.golang.org/grpc/resolver"
)

// AddressWant says what an upstream address may be; CheckAddresses ends
// its messages with it.
const AddressWant = "want host:port (port 1-65535), several host:port, or one gRPC target such as dns:///name:port"

// AddressError is one entry of an address list that could never be
// dialled.
type AddressError struct {
	Index int    // the entry's place in the list, from 0
	Addr  string // the entry as given
	Msg   string // why, naming the entry, e.g. `"localhost:abc" has port "abc"; want 1-65535`
}

// Error returns Msg.
func (e *AddressError) Error() string { return e.Msg }

// CheckAddresses reports every entry of addrs that could never be dialled,
// each an *AddressError, joined; nil when every entry can be. It owns the
// rules for every upstream list Portico dials (the edge's
// upstreams[].addresses, the order service's --inventory and --payment),
// so a bad address fails at start rather than as an error on every call:
//
//   - each entry is host:port with a host and a port of 1-65535 or a
//     service name the system knows (localhost:http), IPv6 in brackets
//     ([::1]:43101), and none is empty;
//   - a list of one may instead be a target of a resolver gRPC has
//     registered (dns:///name:port, unix:inventory.sock, unix:///path,
//     unix-abstract:name, passthrough:///addr), whose own rules apply to
//     the rest; dns:/// needs a name, and a port it has must be one
//     (without one, gRPC dials 443).
//
// An empty list is not checked here: the caller decides whether one is
// required.
func CheckAddresses(addrs []string) error {
	var errs []error
	for i, a := range addrs {
		if msg := checkAddress(a, len(addrs) == 1); msg != "" {
			errs = append(errs, &AddressError{Index: i, Addr: a, Msg: msg})
		}
	}
	return errors.Join(errs...)
}

// checkAddress says why a, an entry of a list (single: the only one),
// could never be dialled, or "".
func checkAddress(a string, single bool) string {
	if strings.TrimSpace(a) == "" {
		return "must not be empty"
	}
	if !single {
		if strings.Contains(a, "/") {
			return fmt.Sprintf("%q is not host:port; with several addresses each must be host:port", a)
		}
		return checkHostPort(a, a)
	}
	if rest, ok := strings.CutPrefix(a, "dns:///"); ok {
		if rest != "" && !strings.ContainsAny(rest, ":/ ") {
			return "" // a name alone: gRPC's DNS resolver dials port 443
		}
		return checkHostPort(a, rest)
	}
	if scheme, _, ok := strings.Cut(a, ":"); ok {
		if resolver.Get(scheme) != nil {
			return "" // that resolver's own rules (gRPC parses the target alike)
		}
		if strings.Contains(a, "/") {
			return fmt.Sprintf("%q: gRPC has no resolver for scheme %q; %s", a, scheme, AddressWant)
		}
	}
	return checkHostPort(a, a)
}

// checkHostPort says why hp, the host:port of entry a, is not one, or "".
func checkHostPort(a, hp string) string {
	host, port, err := net.SplitHostPort(hp)
	if err != nil || strings.ContainsAny(hp, "/ \t\r\n") {
		return fmt.Sprintf("%q is not host:port; %s", a, AddressWant)
	}
	if host == "" {
		return fmt.Sprintf("%q has no host; %s", a, AddressWant)
	}
	if !validPort(port) {
		return fmt.Sprintf("%q has port %q; want a port of 1-65535 or a known service name", a, port)
	}
	return ""
}

// validPort reports a port number of 1-65535 or a service name the
// system resolves (http, https, ...), as net.Dial takes.
func validPort(port string) bool {
	if n, err := strconv.ParseUint(port, 10, 16); err == nil {
		return n > 0
	}
	if port == "" || !('a' <= port[0] && port[0] <= 'z' || 'A' <= port[0] && port[0] <= 'Z') {
		return false
	}
	n, err := net.LookupPort("tcp", port)
	return err == nil && n > 0
}

// HostPorts reports whether addrs is a non-empty list of plain host:port
// instances (no gRPC scheme such as dns:///), the form Config.Addresses
// takes; anything else is one Config.Target. It classifies; CheckAddresses
// says whether the list can be dialled at all.
func HostPorts(addrs []string) bool {
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil || strings.Contains(a, "/") {
			return false
		}
	}
	return len(addrs) > 0
}
