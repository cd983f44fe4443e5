package identity

import (
	"strings"
	"testing"
)

// FuzzVerify feeds arbitrary assertions to the parser: it must never panic,
// and whatever it accepts must be what the ring's key signed.
func FuzzVerify(f *testing.F) {
	keys := mustKeys(f, Key{ID: "k1", Secret: []byte(strings.Repeat("s", 32))})
	now := t0
	m, _ := NewMinter(keys, fixedClock(&now))
	good, _ := m.Mint(invAud, alice, "bob")
	f.Add(good)
	f.Add("")
	f.Add("v1.k1..")
	f.Add("v1.k1.YQ.YQ")
	f.Add(good + "." + good)
	f.Add(strings.Replace(good, "v1.k1", "v1.k2", 1))
	v, _ := NewVerifier(keys, invAud, fixedClock(&now))
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := v.Verify(tok)
		if err != nil {
			return
		}
		// Whatever is accepted is exactly what the key mints for its claims.
		if again, err := mint(keys, c); err != nil || again != tok {
			t.Fatalf("Verify(%q) accepted claims %+v that mint to %q (%v)", tok, c, again, err)
		}
	})
}

// FuzzParseKeys: the keys parser never panics and never accepts a ring that
// does not survive a round trip.
func FuzzParseKeys(f *testing.F) {
	f.Add("k1 " + strings.Repeat("A", 44))
	f.Add("k1 " + strings.Repeat("A", 44) + "\nk0 " + strings.Repeat("B", 44) + " 2026-12-01T00:00:00Z")
	f.Add("# c\n;;k1 x")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseKeys(text)
		if err != nil {
			return
		}
		back, err := ParseKeys(r.String())
		if err != nil || back.String() != r.String() {
			t.Fatalf("ParseKeys(%q) round trip = %v, %v", text, back, err)
		}
	})
}
