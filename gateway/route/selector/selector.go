package selector

import (
	"errors"
	"net/http"
	"strings"

	"github.com/portico-gateway/portico/gateway/route"
)

// ErrNoRoute is Resolve's error for a selector that selects no route.
var ErrNoRoute = errors.New("selects no route")

// errSyntax is Parse's one error: what a selector may be.
var errSyntax = errors.New(`want "*", a path template ("/api/orders/{id}"), a group ("/api/orders/**") or an RPC ("pkg.Service/Method", "pkg.Service/*"), optionally after an upper-case METHOD`)

// Selector is a parsed selector; the zero value selects nothing.
type Selector struct {
	method  string // "" for every method
	all     bool   // target "*"
	path    string // an exact template, "" for none
	group   string // the template prefix of "/prefix/**", "" for none
	service string // an RPC's service, "" for none
	rpc     string // the RPC's method name, or "*" for every one
}

// Parse reads one selector (see the package doc).
func Parse(text string) (Selector, error) {
	var s Selector
	target := text
	if m, rest, ok := strings.Cut(text, " "); ok && m != "" && m == strings.ToUpper(m) {
		s.method, target = m, rest
	}
	switch {
	case target == "*":
		s.all = true
	case strings.HasPrefix(target, "/api") && strings.HasSuffix(target, "/**"):
		s.group = strings.TrimSuffix(target, "/**")
	case underAPI(target):
		s.path = target
	default:
		var ok bool
		if s.service, s.rpc, ok = parseRPC(target); ok {
			if strings.HasPrefix(target, "/") {
				s.path = target // read both ways: see the package doc
			}
		} else if strings.HasPrefix(target, "/") {
			s.path = target
		} else {
			return Selector{}, errSyntax
		}
	}
	return s, nil
}

// underAPI reports whether p is /api or below it: always a template.
func underAPI(p string) bool { return p == "/api" || strings.HasPrefix(p, "/api/") }

// parseRPC reads "pkg.Service/Method", "pkg.Service/*" or
// "pkg.Service.Method", each optionally after "/".
func parseRPC(t string) (service, method string, ok bool) {
	t = strings.TrimPrefix(t, "/")
	service, method, slash := strings.Cut(t, "/")
	if !slash {
		i := strings.LastIndexByte(t, '.')
		if i < 0 {
			return "", "", false
		}
		service, method = t[:i], t[i+1:]
	}
	if !fullName(service) || !(ident(method) || slash && method == "*") {
		return "", "", false
	}
	return service, method, true
}

// fullName reports whether s is a protobuf full name (a.b.C).
func fullName(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if !ident(part) {
			return false
		}
	}
	return true
}

// ident reports whether s is a protobuf identifier.
func ident(s string) bool {
	for i, c := range s {
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// Method is the method s narrows to, "" for every method.
func (s Selector) Method() string { return s.method }

// Selects reports whether s selects r.
func (s Selector) Selects(r *route.Route) bool {
	if s.method != "" && r.Method != s.method && !(s.method == http.MethodHead && r.Method == http.MethodGet) {
		return false
	}
	switch {
	case s.all:
		return true
	case s.group != "":
		return r.Pattern == s.group || strings.HasPrefix(r.Pattern, s.group+"/")
	}
	return s.path != "" && r.Pattern == s.path || s.service != "" && s.selectsRPC(r.RPC)
}

// selectsRPC reports whether s's RPC is rpc ("/pkg.Service/Method").
func (s Selector) selectsRPC(rpc string) bool {
	svc, m, _ := strings.Cut(strings.TrimPrefix(rpc, "/"), "/")
	return svc == s.service && (s.rpc == "*" || m == s.rpc)
}

// Select returns the routes s selects, in order.
func (s Selector) Select(routes []*route.Route) []*route.Route {
	var out []*route.Route
	for _, r := range routes {
		if s.Selects(r) {
			out = append(out, r)
		}
	}
	return out
}

// String writes s as Parse reads it back.
func (s Selector) String() string {
	var target string
	switch {
	case s.all:
		target = "*"
	case s.group != "":
		target = s.group + "/**"
	case s.path != "":
		target = s.path
	case s.service != "":
		target = s.service + "/" + s.rpc
	}
	if s.method == "" {
		return target
	}
	return s.method + " " + target
}

// Resolve parses text and selects from routes; a selector that selects no
// route is ErrNoRoute.
func Resolve(text string, routes []*route.Route) ([]*route.Route, error) {
	s, err := Parse(text)
	if err != nil {
		return nil, err
	}
	out := s.Select(routes)
	if len(out) == 0 {
		return nil, ErrNoRoute
	}
	return out, nil
}
