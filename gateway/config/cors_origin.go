package config

import (
	"net/netip"
	"strconv"
	"strings"
)

// maxHostLen bounds an origin's host as DNS bounds a name (RFC 1035
// §2.3.4: 253 characters written out, labels of at most 63), so an
// allowed origin is at most about 270 bytes.
const maxHostLen = 253

// isOrigin reports whether o is a serialised origin as a browser sends it
// in the Origin header (RFC 6454 §6.2): http or https, "://", a lower-case
// host that is a DNS name or an IP literal (IPv6 in brackets), and an
// optional port of 1-65535; no user info, path, query or fragment.
func isOrigin(o string) bool {
	scheme, hostport, ok := strings.Cut(o, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return false
	}
	host, port, hasPort := hostport, "", false
	if strings.HasPrefix(hostport, "[") { // an IPv6 literal, then maybe :port
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return false
		}
		host, port = hostport[:end+1], hostport[end+1:]
		if port, hasPort = strings.CutPrefix(port, ":"); !hasPort && port != "" {
			return false
		}
	} else {
		host, port, hasPort = strings.Cut(hostport, ":")
	}
	if hasPort && !originPort(port) {
		return false
	}
	if ip, ok := strings.CutPrefix(host, "["); ok {
		ip = strings.TrimSuffix(ip, "]")
		a, err := netip.ParseAddr(ip)
		return err == nil && a.Is6() && a.String() == ip // as a browser writes it
	}
	return isDNSName(host) // an IPv4 address is one too
}

// originPort reports whether p is a port of 1-65535 written as a browser
// writes it (no sign, no leading zero).
func originPort(p string) bool {
	n, err := strconv.ParseUint(p, 10, 16)
	return err == nil && n > 0 && p[0] != '0' && p[0] != '+'
}

// isDNSName reports whether h is a lower-case host name: dot-separated
// labels of 1-63 letters, digits and hyphens, not starting or ending with
// a hyphen (RFC 1123 §2.1), at most maxHostLen in all.
func isDNSName(h string) bool {
	if h == "" || len(h) > maxHostLen {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
