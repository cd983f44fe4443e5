package pagetoken_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/internal/pagetoken"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func codec(t testing.TB, list string) *pagetoken.Codec {
	c, err := pagetoken.New(secret, list)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDecode: Decode returns what Encode signed, and refuses a token a
// client made or changed: the bare base64 of a position (what tokens used
// to be, so anyone could craft one), a changed byte, or another list's
// token.
func TestDecode(t *testing.T) {
	c := codec(t, "items")
	std := base64.RawURLEncoding.EncodeToString
	valid := c.Encode("1700000000000000000/ord-1")
	raw, _ := base64.RawURLEncoding.DecodeString(valid)
	raw[0] ^= 1
	tests := []struct {
		name    string
		tok     string
		wantPos string
		wantOK  bool
	}{
		{"no token", "", "", true},
		{"a sku", c.Encode("keyboard-001"), "keyboard-001", true},
		{"an order position", valid, "1700000000000000000/ord-1", true},
		{"longest position", c.Encode(strings.Repeat("z", pagetoken.MaxPosition)), strings.Repeat("z", pagetoken.MaxPosition), true},
		{"one byte too long", c.Encode(strings.Repeat("z", pagetoken.MaxPosition+1)), "", false},
		{"crafted: a bare base64 position", std([]byte("1700000000000000000/ord-1")), "", false},
		{"tampered position", std(raw), "", false},
		{"truncated tag", valid[:len(valid)-2], "", false},
		{"another list's token", codec(t, "orders").Encode("keyboard-001"), "", false},
		{"another secret's token", pagetoken.NewRandom("items").Encode("keyboard-001"), "", false},
		{"far too long", strings.Repeat("A", 100_000), "", false},
		{"not base64", "!!!", "", false},
		{"padded", valid + "==", "", false},
		{"standard alphabet", "+/8", "", false},
		{"newline inside", valid[:4] + "\n" + valid[4:], "", false},
		{"impossible length", "A", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pos, ok := c.Decode(tt.tok)
			if pos != tt.wantPos || ok != tt.wantOK {
				t.Errorf("Decode(%.40q) = %q, %v; want %q, %v", tt.tok, pos, ok, tt.wantPos, tt.wantOK)
			}
		})
	}
}

func TestNew(t *testing.T) {
	if _, err := pagetoken.New(secret[:pagetoken.MinSecretLen-1], "items"); err == nil {
		t.Error("New(short secret) = nil error, want one")
	}
	if _, err := pagetoken.NewOrRandom(secret[:pagetoken.MinSecretLen-1], "items"); err == nil {
		t.Error("NewOrRandom(short secret) = nil error, want one")
	}
	c, err := pagetoken.NewOrRandom(nil, "items")
	if err != nil {
		t.Fatalf("NewOrRandom(nil) = %v", err)
	}
	if pos, ok := c.Decode(c.Encode("keyboard-001")); !ok || pos != "keyboard-001" {
		t.Errorf("NewOrRandom(nil): Decode(Encode) = %q, %v", pos, ok)
	}
}

// FuzzDecode: a token Decode accepts is exactly the Encode of what it
// returns, a position of at most MaxPosition bytes; and every such
// position comes back from its token.
func FuzzDecode(f *testing.F) {
	c := codec(f, "items")
	for _, s := range []string{"", "keyboard-001", c.Encode("keyboard-001"), c.Encode("1/ord-1"), "YQ", "Y0", "A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if pos, ok := c.Decode(s); ok && (c.Encode(pos) != s || len(pos) > pagetoken.MaxPosition) {
			t.Fatalf("Decode(%q) = %q, true; its Encode is %q", s, pos, c.Encode(pos))
		}
		if s != "" && len(s) <= pagetoken.MaxPosition {
			if pos, ok := c.Decode(c.Encode(s)); !ok || pos != s {
				t.Fatalf("Decode(Encode(%q)) = %q, %v; want it back", s, pos, ok)
			}
		}
	})
}
