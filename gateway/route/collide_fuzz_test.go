package route

import (
	"strings"
	"testing"
)

// FuzzCollide checks collide's two searches against the matcher on any
// path: when a path matches both templates, witness finds one (so two
// services never share a path unnoticed), and when covers says later
// takes every path of earlier, it takes this one.
func FuzzCollide(f *testing.F) {
	for _, s := range [][3]string{
		{"/api/orders/{id}", "/api/orders/{name=**}", "/api/orders/a"},
		{"/api/orders/{id}", "/api/orders/{id}:watch", "/api/orders/a:watch"},
		{"/api/orders:export", "/api/{x=**}", "/api/orders:export"},
		{"/api/a/*/b", "/api/**/b:v", "/api/a/c/b:v"},
		{"/api/{n=x/*}/y", "/api/x/**", "/api/x/z/y"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, path string) {
		as, av, _, errA := parseTemplate(a)
		bs, bv, _, errB := parseTemplate(b)
		if errA != nil || errB != nil || !strings.HasPrefix(path, "/") {
			return
		}
		comps := strings.Split(path[1:], "/")
		inA, inB := matchVerb(as, av, comps), matchVerb(bs, bv, comps)
		if inA && inB {
			if _, ok := witness(as, av, bs, bv); !ok {
				t.Errorf("%s and %s both match %s; witness found no path", a, b, path)
			}
		}
		pa, pb := parsedRoute{segs: as, verb: av}, parsedRoute{segs: bs, verb: bv}
		if inA && !inB && covers(pb, pa) {
			t.Errorf("covers(%s, %s), yet %s matches only the latter", b, a, path)
		}
	})
}
