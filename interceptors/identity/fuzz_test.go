package identity

import (
	"strings"
	"testing"
	"time"
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
		if !validField(c.Subject, false) || !validField(c.Role, false) || c.Audience != invAud {
			t.Fatalf("Verify(%q) accepted bad claims %+v", tok, c)
		}
		again, err := m.Mint(c.Audience, c.Principal(), c.For)
		if err != nil || (again != tok && c.IssuedAt.Equal(now.Truncate(time.Second)) && c.Expires.Equal(now.Add(DefaultTTL))) {
			t.Fatalf("Verify(%q) accepted a token the key did not mint (%v)", tok, err)
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
