package auth

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestTickets(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	key, old := []byte(strings.Repeat("k", 32)), []byte(strings.Repeat("o", 32))
	alice := NewPrincipal("alice", []string{"customer"}, "t1", "pro", ViaAPIKey)
	issue := func(t *testing.T, keys [][]byte, path string) string {
		t.Helper()
		tk, exp, err := (&Tickets{Keys: keys, Nonces: &MemoryNonces{}, Now: func() time.Time { return now }}).Issue(alice, path)
		if err != nil || !exp.Equal(now.Add(DefaultTicketTTL)) {
			t.Fatalf("Issue = %v, %v; want an expiry of %v", exp, err, now.Add(DefaultTicketTTL))
		}
		return tk
	}
	tests := []struct {
		name    string
		keys    [][]byte // the issuer's
		path    string   // redeemed for
		after   time.Duration
		since   time.Duration // the nonce store's horizon, relative to now
		twice   bool
		wantErr error
	}{
		{"ok", [][]byte{key}, "/api/orders/o1:watch", 0, 0, false, nil},
		{"signed with the key before a rotation", [][]byte{old}, "/api/orders/o1:watch", 0, 0, false, nil},
		{"last millisecond", [][]byte{key}, "/api/orders/o1:watch", DefaultTicketTTL - time.Millisecond, 0, false, nil},
		{"expired", [][]byte{key}, "/api/orders/o1:watch", DefaultTicketTTL, 0, false, ErrExpired},
		{"another path", [][]byte{key}, "/api/orders/o2:watch", 0, 0, false, ErrInvalidCredentials},
		{"unknown key", [][]byte{[]byte(strings.Repeat("x", 32))}, "/api/orders/o1:watch", 0, 0, false, ErrInvalidCredentials},
		{"used twice", [][]byte{key}, "/api/orders/o1:watch", 0, 0, true, ErrReplayed},
		{"issued before the store remembered", [][]byte{key}, "/api/orders/o1:watch", time.Second, time.Second, false, ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := issue(t, tt.keys, "/api/orders/o1:watch")
			var since time.Time
			if tt.since > 0 {
				since = now.Add(tt.since)
			}
			v := &Tickets{Keys: [][]byte{key, old}, Nonces: &MemoryNonces{Since: since, Now: func() time.Time { return now.Add(tt.after) }},
				Now: func() time.Time { return now.Add(tt.after) }}
			p, err := v.Redeem(context.Background(), tk, tt.path)
			if tt.twice && err == nil {
				_, err = v.Redeem(context.Background(), tk, tt.path)
			}
			if !errors.Is(err, tt.wantErr) || tt.wantErr != nil && Detail(err) == "" {
				t.Fatalf("Redeem = %v, want %v with a detail", err, tt.wantErr)
			}
			if err == nil && !tt.twice && (p.Subject != "alice" || p.Role != "customer" || p.Tenant != "t1" || p.Plan != "pro" || p.Via != ViaTicket) {
				t.Errorf("Redeem principal = %+v", p)
			}
		})
	}
}

func TestTicketsAuthenticate(t *testing.T) {
	tests := []struct {
		name, method, target string
		header               string
		wantErr              error
	}{
		{"no ticket", "GET", "/a?x=1", "", nil},
		{"two", "GET", "/a?ticket=a&ticket=b", "", ErrMalformed},
		{"with a token", "GET", "/a?ticket=a", "Authorization", ErrMalformed},
		{"with a signature", "GET", "/a?ticket=a", "X-Signature", ErrMalformed},
		{"on a POST", "POST", "/a?ticket=a", "", ErrMalformed},
		{"not a ticket", "GET", "/a?ticket=a", "", ErrInvalidCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, nil)
			if tt.header != "" {
				r.Header.Set(tt.header, "x")
			}
			if HasTicket(r.URL.RawQuery) != (tt.wantErr != nil) {
				t.Fatalf("HasTicket(%q) = %v", r.URL.RawQuery, !(tt.wantErr != nil))
			}
			if tt.wantErr == nil {
				return
			}
			tk := &Tickets{Keys: [][]byte{[]byte(strings.Repeat("k", 32))}, Nonces: &MemoryNonces{}}
			if _, err := tk.Authenticate(r); !errors.Is(err, tt.wantErr) {
				t.Errorf("Authenticate(%s %s) = %v, want %v", tt.method, tt.target, err, tt.wantErr)
			}
		})
	}
}

func TestStripTicket(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"ticket=a":         "",
		"a=1&ticket=b&c=2": "a=1&c=2",
		"xticket=1":        "xticket=1",
		"a=1&&ticket=b":    "a=1",
		"format=CSV":       "format=CSV",
	} {
		if got := StripTicket(in); got != want {
			t.Errorf("StripTicket(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzRedeem(f *testing.F) {
	tk := &Tickets{Keys: [][]byte{[]byte(strings.Repeat("k", 32))}, Nonces: &MemoryNonces{}}
	good, _, _ := tk.Issue(NewPrincipal("alice", nil, "", "", ""), "/p")
	for _, s := range []string{good, "pst1.", "pst1.a.b", "pst1..", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := tk.Redeem(context.Background(), s, "/p")
		if err == nil && p.Subject != "alice" {
			t.Fatalf("Redeem(%q) = %+v", s, p)
		}
	})
}
