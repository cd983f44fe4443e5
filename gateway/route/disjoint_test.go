package route

import (
	"strings"
	"testing"
)

// TestDisjoint: routes are disjoint only when a length or a literal rules
// out every path; a path in want matches both, so they are not.
func TestDisjoint(t *testing.T) {
	tests := []struct {
		a, b     string
		disjoint bool
		both     string // a path both match, when they are not disjoint
	}{
		{"/api/inventory/{sku}", "/api/orders/{id}", true, ""},
		{"/api/inventory/{sku}", "/api/inventory", true, ""},
		{"/api/orders/{id}", "/api/orders/{id}:watch", false, "/api/orders/x:watch"},
		{"/api/orders/{id}", "/api/orders:export", true, ""}, // lengths differ
		{"/api/inventory", "/api/orders:export", false, ""},  // a verb's segment is not compared
		{"/api/b/{p=**}", "/api/b/x", false, "/api/b/x"},
		{"/api/b/{p=**}", "/api/b", false, "/api/b"},
		{"/api/b/{p=**}", "/api/c/x", true, ""},
		{"/api/b/{p=**}", "/api/c/x/y", true, ""},
		{"/api/{p=**}/x", "/api/c", false, ""},
		{"/api/b/{n=shelves/*}", "/api/b/books/x", true, ""},
		{"/api/b/{n=shelves/*}", "/api/b/{id}/x", false, "/api/b/shelves/x"},
		{"/api/{bad", "/api/x", false, ""},
	}
	for _, tt := range tests {
		a, b := &Route{Method: "GET", Pattern: tt.a}, &Route{Method: "GET", Pattern: tt.b}
		if got := Disjoint(a, b); got != tt.disjoint {
			t.Errorf("Disjoint(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.disjoint)
		}
		if got := Disjoint(b, a); got != tt.disjoint {
			t.Errorf("Disjoint(%s, %s) = %v, want %v", tt.b, tt.a, got, tt.disjoint)
		}
		for _, r := range []*Route{a, b} {
			segs, verb, _ := r.parsed()
			if tt.both != "" && !matchVerb(segs, verb, strings.Split(tt.both[1:], "/")) {
				t.Errorf("%s does not match %s", tt.both, r.Pattern)
			}
		}
	}
}
