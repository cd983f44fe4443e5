package selector_test

import (
	"testing"

	"github.com/portico-gateway/portico/gateway/route/selector"
)

// FuzzSelector parses any string and matches it against the real route
// table: nothing panics, and a selector that parses round-trips: String
// parses to the same Selector, which selects the same routes.
func FuzzSelector(f *testing.F) {
	rs := tableRoutes(f)
	for _, r := range rs {
		f.Add(r.Key())
		f.Add(r.Pattern)
		f.Add(r.RPC)
		f.Add(r.Method + " " + r.RPC[1:])
	}
	for _, s := range []string{"*", "GET *", "/api/orders/**", "portico.order.v1.OrderService/*", "a.B.C", "/apiary/**", "HEAD /v1/things", "", " ", "X /", "/api/**"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := selector.Parse(text)
		if err != nil {
			return
		}
		got := s.Select(rs)
		again, err := selector.Parse(s.String())
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q, which Parse refuses: %v", text, s.String(), err)
		}
		if again != s {
			t.Fatalf("Parse(%q) = %#v, Parse of its String %q = %#v", text, s, s.String(), again)
		}
		if keys(again.Select(rs)) != keys(got) {
			t.Fatalf("%q selects %s, its String %q selects %s", text, keys(got), s.String(), keys(again.Select(rs)))
		}
	})
}
