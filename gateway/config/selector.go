package config

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/portico-gateway/portico/gateway/route"
)

// Selector is a parsed route selector: a key of routes.overrides, or an
// entry of limits.groups[].routes or shed.groups[].routes.
type Selector struct {
	method, pattern, rpc string
}

// ParseSelector parses "METHOD /path", "/path" or an RPC full name.
func ParseSelector(key string) (Selector, error) {
	method, rest, spaced := strings.Cut(key, " ")
	switch {
	case spaced && strings.HasPrefix(rest, "/") && method == strings.ToUpper(method) && method != "":
		return Selector{method: method, pattern: rest}, nil
	case strings.HasPrefix(key, "/api/") || key == "/api":
		return Selector{pattern: key}, nil
	}
	name := strings.TrimPrefix(key, "/")
	if i := strings.LastIndexAny(name, "/."); i > 0 && !strings.ContainsAny(name, " {}") && strings.Count(name, "/") <= 1 {
		svc, m := name[:i], name[i+1:]
		if svc != "" && m != "" {
			return Selector{rpc: "/" + svc + "/" + m}, nil
		}
	}
	return Selector{}, fmt.Errorf(`want "METHOD /path", "/path" or an RPC name such as portico.order.v1.OrderService/CreateOrder`)
}

// Selects reports whether s selects r (a GET route serves HEAD too).
func (s Selector) Selects(r *route.Route) bool {
	if s.rpc != "" {
		return r.RPC == s.rpc
	}
	return r.Pattern == s.pattern && (s.method == "" || s.method == r.Method ||
		s.method == http.MethodHead && r.Method == http.MethodGet)
}
