package pagetoken_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/internal/pagetoken"
)

func TestDecode(t *testing.T) {
	std := base64.RawURLEncoding.EncodeToString
	tests := []struct {
		name    string
		tok     string
		wantPos string
		wantOK  bool
	}{
		{"no token", "", "", true},
		{"a sku", std([]byte("keyboard-001")), "keyboard-001", true},
		{"an order position", std([]byte("1700000000000000000/ord-1")), "1700000000000000000/ord-1", true},
		{"longest position", std([]byte(strings.Repeat("z", pagetoken.MaxPosition))), strings.Repeat("z", pagetoken.MaxPosition), true},
		{"one byte too long", std([]byte(strings.Repeat("z", pagetoken.MaxPosition+1))), "", false},
		{"far too long", strings.Repeat("A", 100_000), "", false},
		{"not base64", "!!!", "", false},
		{"padded", "YQ==", "", false},
		{"standard alphabet", "+/8", "", false},
		{"newline inside", "Z\nA", "", false},
		{"stray padding bits", "Y0", "", false}, // "c" is "Yw"
		{"impossible length", "A", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pos, ok := pagetoken.Decode(tt.tok)
			if pos != tt.wantPos || ok != tt.wantOK {
				t.Errorf("Decode(%.40q) = %q, %v; want %q, %v", tt.tok, pos, ok, tt.wantPos, tt.wantOK)
			}
		})
	}
}

// FuzzDecode: a token Decode accepts is exactly the Encode of what it
// returns, and every position of up to MaxPosition bytes round-trips.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"", "YQ", "Z\nA", "Y0", "a2V5Ym9hcmQtMDAx", "YQ==", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if pos, ok := pagetoken.Decode(s); ok && (pagetoken.Encode(pos) != s || len(pos) > pagetoken.MaxPosition) {
			t.Fatalf("Decode(%q) = %q, true; its Encode is %q", s, pos, pagetoken.Encode(pos))
		}
		if len(s) <= pagetoken.MaxPosition {
			if pos, ok := pagetoken.Decode(pagetoken.Encode(s)); !ok || pos != s {
				t.Fatalf("Decode(Encode(%q)) = %q, %v; want it back", s, pos, ok)
			}
		}
	})
}
