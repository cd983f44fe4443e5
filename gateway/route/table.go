package route

import (
	"errors"
	"net/http"
	"sort"
	"strings"
)

// Table is an immutable set of routes.
type Table struct {
	routes []*Route
}

// NewTable returns a table of routes in registration order. Two routes
// that collide are an error naming both: the same method and the same
// shape (the same template whatever its variables are called), or routes
// of different services that both match some path (see collide).
func NewTable(routes []*Route) (*Table, error) {
	var errs []error
	ps := make([]parsedRoute, len(routes))
	for i, r := range routes {
		ps[i] = parse(r)
		for _, earlier := range ps[:i] {
			if err := collide(ps[i], earlier); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Table{routes: append([]*Route(nil), routes...)}, nil
}

// Routes returns the routes in registration order.
func (t *Table) Routes() []*Route { return append([]*Route(nil), t.routes...) }

// Match returns the route for method and the unescaped URL path. When none
// matches it returns nil and the methods that match the path (with HEAD
// wherever GET is), sorted; both empty means no route has the path.
func (t *Table) Match(method, path string) (*Route, []string) {
	if !strings.HasPrefix(path, "/") {
		return nil, nil
	}
	if method == http.MethodHead {
		method = http.MethodGet
	}
	var buf [16]string // most paths have fewer components: no allocation
	comps := appendSplit(buf[:0], path[1:])
	if r := t.find(method, comps); r != nil {
		return r, nil
	}
	methods := map[string]bool{}
	for _, r := range t.routes {
		if !methods[r.Method] && r.matches(comps) {
			methods[r.Method] = true
		}
	}
	if methods[http.MethodGet] {
		methods[http.MethodHead] = true
	}
	allow := make([]string, 0, len(methods))
	for m := range methods {
		allow = append(allow, m)
	}
	sort.Strings(allow)
	return nil, allow
}

// appendSplit appends the "/"-separated components of s to dst, as
// strings.Split(s, "/") returns them ("" is one empty component).
func appendSplit(dst []string, s string) []string {
	for {
		i := strings.IndexByte(s, '/')
		if i < 0 {
			return append(dst, s)
		}
		dst = append(dst, s[:i])
		s = s[i+1:]
	}
}

// find scans the routes of method last to first, like runtime.ServeMux,
// which puts each new handler in front of the earlier ones.
func (t *Table) find(method string, comps []string) *Route {
	for i := len(t.routes) - 1; i >= 0; i-- {
		if r := t.routes[i]; r.Method == method && r.matches(comps) {
			return r
		}
	}
	return nil
}

func (r *Route) matches(comps []string) bool { return matchVerb(r.segs, r.verb, comps) }

// matchVerb reports whether comps match segs and verb.
func matchVerb(segs []segment, verb string, comps []string) bool {
	if verb == "" {
		return match(segs, comps)
	}
	last := comps[len(comps)-1]
	idx := len(last) - len(verb) - 1
	if idx <= 0 || !strings.HasSuffix(last, ":"+verb) {
		return false
	}
	var buf [16]string
	c := append(buf[:0], comps...)
	c[len(c)-1] = last[:idx]
	return match(segs, c)
}

// Values returns the values of r's path variables in the unescaped URL
// path, in the order of r.Vars; ok is false when path does not match r.
func (r *Route) Values(path string) (_ []string, ok bool) {
	if !strings.HasPrefix(path, "/") {
		return nil, false
	}
	comps := appendSplit(nil, path[1:])
	if r.verb != "" {
		last := comps[len(comps)-1]
		idx := len(last) - len(r.verb) - 1
		if idx <= 0 || !strings.HasSuffix(last, ":"+r.verb) {
			return nil, false
		}
		comps[len(comps)-1] = last[:idx]
	}
	if !match(r.segs, comps) {
		return nil, false
	}
	return capture(r.segs, comps, len(r.Vars)), true
}
