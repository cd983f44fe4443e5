package gateway

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestStaleKeySpellings: a copy is keyed by the request message the
// upstream gets, not by how the URL spells it: a copy kept through one
// spelling is answered through every other spelling of the same request
// (an escaped path byte, the query's order, an empty parameter), and a
// request the upstream would see differently gets none.
func TestStaleKeySpellings(t *testing.T) {
	tests := []struct {
		name, fill, ask string
		want            int
	}{
		{"escaped path byte", "/api/inventory/A", "/api/inventory/%41", 200},
		{"escaped path, filled escaped", "/api/inventory/%41", "/api/inventory/A", 200},
		{"query order", "/api/inventory?pageSize=2&pageToken=t", "/api/inventory?pageToken=t&pageSize=2", 200},
		{"escaped query", "/api/inventory?pageToken=t", "/api/inventory?page%54oken=%74", 200},
		{"empty parameter", "/api/inventory?pageSize=2", "/api/inventory?pageSize=2&pageToken=", 200},
		{"zero is unset", "/api/inventory", "/api/inventory?pageSize=0", 200},
		{"other sku", "/api/inventory/A", "/api/inventory/B", 503},
		{"other query value", "/api/inventory?pageSize=2", "/api/inventory?pageSize=3", 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, f := staleHarness(t, setup{})
			first := h.do("GET", tt.fill, aliceToken, "")
			if first.status != 200 {
				t.Fatalf("GET %s = %d %s", tt.fill, first.status, first.body)
			}
			f.set(status.Error(codes.Unavailable, "down"))
			got := h.do("GET", tt.ask, aliceToken, "")
			if got.status != tt.want {
				t.Fatalf("GET %s while failing = %d %s, want %d", tt.ask, got.status, got.body, tt.want)
			}
			if tt.want == 200 && (got.header.Get("Cache-Status") == "" || string(got.body) != string(first.body)) {
				t.Errorf("GET %s while failing = %v %s, want the copy of %s", tt.ask, got.header, got.body, tt.fill)
			}
		})
	}
}

// TestStaleKeyOneCopy: every spelling of one request keeps one copy, not
// one per spelling, so a client cannot multiply the copies' memory.
func TestStaleKeyOneCopy(t *testing.T) {
	h, _ := staleHarness(t, setup{})
	for _, p := range []string{"/api/inventory?pageSize=2&pageToken=t", "/api/inventory?pageToken=t&pageSize=2",
		"/api/inventory?pageToken=%74&pageSize=2", "/api/inventory?pageSize=2&pageToken=t&"} {
		if got := h.do("GET", p, aliceToken, ""); got.status != 200 {
			t.Fatalf("GET %s = %d %s", p, got.status, got.body)
		}
	}
	if n := h.srv.copies.lru.Stats().Copies; n != 1 {
		t.Errorf("copies kept after four spellings of one request = %d, want 1", n)
	}
}
