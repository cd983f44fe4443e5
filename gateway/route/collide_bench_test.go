package route

import (
	"fmt"
	"testing"
)

// BenchmarkNewTable1000: NewTable checks every pair of routes; 1000
// routes of 100 services (10 each, the shapes a service usually has).
func BenchmarkNewTable1000(b *testing.B) {
	var routes []*Route
	for s := range 100 {
		for _, p := range []string{"", "/{id}", "/{id}:cancel", "/{id}/items", "/{id}/items/{n}"} {
			for _, m := range []string{"GET", "POST"} {
				routes = append(routes, &Route{Method: m, Pattern: fmt.Sprintf("/api/svc%d%s", s, p), RPC: fmt.Sprintf("/acme.s%d.Svc/%s%d", s, m, len(p))})
			}
		}
	}
	for b.Loop() {
		if _, err := NewTable(routes); err != nil {
			b.Fatal(err)
		}
	}
}
