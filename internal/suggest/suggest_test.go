package suggest

import "testing"

func TestClosest(t *testing.T) {
	commands := []string{"dev", "gateway", "inventory", "payment", "order", "migrate", "check-config", "identity", "version", "completion", "help"}
	tests := []struct {
		name, typed string
		candidates  []string
		want        string
	}{
		{"one letter swapped", "gatewya", commands, "gateway"},
		{"one letter missing", "invntory", commands, "inventory"},
		{"a prefix", "check", commands, "check-config"},
		{"case ignored", "Gateway", commands, ""}, // the same name: nothing to suggest
		{"too far", "frobnicate", commands, ""},
		{"short and far", "xy", commands, ""},
		{"config key", "adresses", []string{"name", "addresses", "timeout"}, "addresses"},
		{"config key typo", "listn", []string{"listen", "admin_listen", "upstreams"}, "listen"},
		{"closest wins", "ordr", []string{"order", "orders"}, "order"},
		{"no candidates", "x", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Closest(tt.typed, tt.candidates); got != tt.want {
				t.Errorf("Closest(%q) = %q, want %q", tt.typed, got, tt.want)
			}
		})
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"same", "same", 0}}
	for _, tt := range tests {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
