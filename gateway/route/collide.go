package route

import (
	"fmt"
	"slices"
	"strings"
)

// Shape is the template with every variable replaced by what it matches
// ("{id}" and "{name=*}" by "*", "{name=**}" by "**", "{name=shelves/*}"
// by "shelves/*"), verb kept: two templates of one shape match exactly the
// same paths, whatever their variables are called.
func (r *Route) Shape() string {
	segs, verb, err := r.parsed()
	if err != nil {
		return r.Pattern
	}
	return shape(segs, verb)
}

func shape(segs []segment, verb string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		switch s.kind {
		case literal:
			b.WriteString(s.lit)
		case single:
			b.WriteByte('*')
		case multi:
			b.WriteString("**")
		}
	}
	if verb != "" {
		b.WriteString(":" + verb)
	}
	return b.String()
}

// parsed returns r's segments and verb; a Route built by hand (no
// segments) has its Pattern parsed.
func (r *Route) parsed() ([]segment, string, error) {
	if r.segs != nil {
		return r.segs, r.verb, nil
	}
	segs, verb, _, err := parseTemplate(r.Pattern)
	return segs, verb, err
}

// service is the service part of r's RPC ("pkg.Service").
func (r *Route) service() string {
	svc, _, _ := strings.Cut(strings.TrimPrefix(r.RPC, "/"), "/")
	return svc
}

// label names r in an error: "GET /api/orders/{id} (pkg.Service/Method @ upstream)".
func (r *Route) label() string {
	return fmt.Sprintf("%s (%s @ %s)", r.Key(), strings.TrimPrefix(r.RPC, "/"), r.Upstream)
}

// parsedRoute is a route with what collide compares, computed once.
type parsedRoute struct {
	*Route
	segs           []segment
	verb           string
	shape, service string
	ok             bool // the template parses
}

func parse(r *Route) parsedRoute {
	segs, verb, err := r.parsed()
	return parsedRoute{Route: r, segs: segs, verb: verb, shape: shape(segs, verb), service: r.service(), ok: err == nil}
}

// collide returns why one table cannot hold both later and earlier, nil
// when it can. Two routes of one method collide when they have the same
// shape (Shape), and, when their RPCs belong to different services, when
// any path matches both: the one registered later would take that path
// from the other (a service's routes may overlap each other, like GetOrder
// /api/orders/{id} and WatchOrder /api/orders/{id}:watch, by design; one
// service never takes another's).
func collide(later, earlier parsedRoute) error {
	if later.Method != earlier.Method || !later.ok || !earlier.ok {
		return nil
	}
	if later.shape == earlier.shape {
		return fmt.Errorf("route: %s and %s are the same route (a variable's name does not matter): a route is bound once", later.label(), earlier.label())
	}
	if later.service == earlier.service {
		if covers(later, earlier) {
			return fmt.Errorf("route: %s is never served: %s, bound after it, matches every path it matches", earlier.label(), later.label())
		}
		return nil
	}
	if p, ok := witness(later.segs, later.verb, earlier.segs, earlier.verb); ok {
		return fmt.Errorf("route: %s overlaps %s, a route of another service: both match %s %s, which the later one would take", later.label(), earlier.label(), later.Method, p)
	}
	return nil
}

// witness returns a path that both templates match, if it finds one. It
// tries every number of components either template can take (a "**"
// takes any number, none too, so one more than the longer template
// covers them all), each component the literal one template requires or
// "x", the last one with the templates' verbs; each candidate is checked
// by the matcher itself, so a path returned is a true witness.
func witness(as []segment, av string, bs []segment, bv string) (string, bool) {
	if disjoint(as, bs) {
		return "", false
	}
	for n := 1; n <= max(len(as), len(bs))+1; n++ {
		comps := make([]string, n)
		ok := true
		for i := range comps {
			sa, okA := at(as, n, i)
			sb, okB := at(bs, n, i)
			if ok = okA && okB; !ok {
				break
			}
			comps[i] = cmpOr(sa.lit, sb.lit, "x")
		}
		if !ok {
			continue
		}
		base := comps[n-1]
		for _, suffix := range verbSuffixes(av, bv) {
			comps[n-1] = base + suffix
			if matchVerb(as, av, comps) && matchVerb(bs, bv, comps) {
				return "/" + strings.Join(comps, "/"), true
			}
		}
	}
	return "", false
}

// covers reports whether every path earlier matches, later matches too,
// so that later, which the table tries first, leaves earlier nothing. It
// checks earlier's most general paths, of every length it can take up to
// one more than the longer template: its literals where it has them, and
// elsewhere a value no literal equals (and no verb ends), its verb
// after the last. later's matcher depends on a wildcard's value only
// through those, so matching all of them is matching every path.
func covers(later, earlier parsedRoute) bool {
	const general = "\x00"
	tried := false
	for n := 1; n <= max(len(later.segs), len(earlier.segs))+1; n++ {
		comps := make([]string, n)
		ok := true
		for i := range comps {
			s, in := at(earlier.segs, n, i)
			if ok = in; !ok {
				break
			}
			comps[i] = cmpOr(s.lit, general)
		}
		if !ok {
			continue
		}
		if earlier.verb != "" {
			comps[n-1] += ":" + earlier.verb
		}
		if !matchVerb(earlier.segs, earlier.verb, comps) {
			continue
		}
		tried = true
		if !matchVerb(later.segs, later.verb, comps) {
			return false
		}
	}
	return tried
}

// Disjoint reports whether no path can match both a and b, judged as
// runtime.ServeMux compares them, from their lengths and literals only:
// neither has a "**" and they take different numbers of components, or at
// one index before either's "**" both take a literal and the literals
// differ. An index that is the last segment of a route with a verb does
// not count (the verb is split off that component before it is
// compared), nor does a template that does not parse: false means they
// may overlap.
func Disjoint(a, b *Route) bool {
	as, av, errA := a.parsed()
	bs, bv, errB := b.parsed()
	if errA != nil || errB != nil {
		return false
	}
	if len(as) != len(bs) && !hasMulti(as) && !hasMulti(bs) {
		return true
	}
	n := min(len(as), len(bs))
	if av != "" {
		n = min(n, len(as)-1)
	}
	if bv != "" {
		n = min(n, len(bs)-1)
	}
	return disjoint(as[:n], bs[:n])
}

func hasMulti(segs []segment) bool {
	return slices.ContainsFunc(segs, func(s segment) bool { return s.kind == multi })
}

// disjoint reports whether two literals at one index before either's
// "**" differ (/api/orders/... and /api/shipments/...): then no path
// matches both, the common case, decided without building paths.
func disjoint(as, bs []segment) bool {
	for i := 0; i < len(as) && i < len(bs); i++ {
		a, b := as[i], bs[i]
		if a.kind == multi || b.kind == multi {
			return false
		}
		if a.kind == literal && b.kind == literal && a.lit != b.lit {
			return true
		}
	}
	return false
}

// cmpOr returns the first non-empty string.
func cmpOr(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// verbSuffixes are the endings a last component might need to match both
// templates' verbs.
func verbSuffixes(a, b string) []string {
	out := []string{""}
	for _, v := range []string{a, b, a + ":" + b, b + ":" + a} {
		if v != "" && v != a+":" && v != ":"+b && v != b+":" && v != ":"+a && !slices.Contains(out, ":"+v) {
			out = append(out, ":"+v)
		}
	}
	return out
}

// at returns the segment of segs that takes component i of a path of n
// components (a "**" segment for every component it takes); false when
// segs cannot match n components.
func at(segs []segment, n, i int) (segment, bool) {
	m := slices.IndexFunc(segs, func(s segment) bool { return s.kind == multi })
	if m < 0 {
		return segs[min(i, len(segs)-1)], n == len(segs)
	}
	rest := len(segs) - m - 1
	switch {
	case n < len(segs)-1:
		return segment{}, false
	case i < m:
		return segs[i], true
	case i >= n-rest:
		return segs[i-(n-rest)+m+1], true
	}
	return segment{kind: multi}, true
}
