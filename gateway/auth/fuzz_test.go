package auth

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// fuzzTokens are the configured tokens of the fuzz targets: RFC 6750
// b64token characters, and one token a prefix of another.
var fuzzTokens = []Token{
	{Token: "admin-secret", Subject: "root", Role: "admin"},
	{Token: "alice-secret", Subject: "alice", Role: "customer"},
	{Token: "alice-secret2", Subject: "alice2", Role: "reader"},
	{Token: "a.b_c~d+e/f==", Subject: "odd", Role: "reader"},
}

func newFuzzTokens(f *testing.F) *Tokens {
	toks, err := NewTokens(fuzzTokens)
	if err != nil {
		f.Fatal(err)
	}
	return toks
}

// authorization returns a request with one Authorization header.
func authorization(v string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.Header["Authorization"] = []string{v}
	return r
}

// principalOf returns the principal configured for tok.
func principalOf(tok string) (Principal, bool) {
	for _, t := range fuzzTokens {
		if t.Token == tok {
			return pr(t.Subject, t.Role), true
		}
	}
	return Principal{}, false
}

// FuzzBearerToken: any Authorization value. BearerToken never panics and
// returns a token only for the RFC 6750 shape "Bearer" 1*SP token, scheme
// in any ASCII case, the token free of whitespace, the whole value trimmed
// of surrounding spaces and tabs (RFC 9110 section 5.5 OWS). Authenticate
// agrees with it: ErrNoCredentials exactly when it finds no token, and
// success exactly for a configured token, with that token's principal.
func FuzzBearerToken(f *testing.F) {
	toks := newFuzzTokens(f)
	for _, s := range []string{
		"Bearer admin-secret", "bearer  alice-secret", "BEARER alice-secret2 ", " Bearer a.b_c~d+e/f==\t",
		"Bearer", "Bearer ", "Bearer\talice-secret", "Bearer alice secret", "Basic YWxpY2U6cHc=",
		"Bearerx alice-secret", "Bearer alice-secret\x00", "Bearer alice-secreT", "Bearer alice-secret\t",
		"\u212aearer alice-secret", "B\u0435arer alice-secret",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		tok, ok := BearerToken(authorization(v))
		trimmed := strings.Trim(v, " \t")
		wantOK := len(trimmed) > len("Bearer ") && asciiEqualFold(trimmed[:6], "bearer") && trimmed[6] == ' '
		wantTok := ""
		if wantOK {
			wantTok = strings.TrimLeft(trimmed[7:], " ")
			wantOK = wantTok != "" && !strings.ContainsAny(wantTok, " \t")
		}
		if ok != wantOK || ok && tok != wantTok {
			t.Fatalf("BearerToken(%q) = %q, %v; want %q, %v", v, tok, ok, wantTok, wantOK)
		}
		p, err := toks.Authenticate(authorization(v))
		want, configured := principalOf(tok)
		switch {
		case !ok && !errors.Is(err, ErrNoCredentials):
			t.Fatalf("Authenticate(%q) = %v, %v; want ErrNoCredentials", v, p, err)
		case ok && configured && (err != nil || !p.Equal(want)):
			t.Fatalf("Authenticate(%q) = %v, %v; want %v", v, p, err, want)
		case ok && !configured && !errors.Is(err, ErrInvalidCredentials):
			t.Fatalf("Authenticate(%q) = %v, %v; want ErrInvalidCredentials", v, p, err)
		}
	})
}

// FuzzAuthenticate spells each configured token in the ways a client may:
// any case of "Bearer", any run of spaces, then the token and a fuzzed
// suffix. Only the exact token (suffix empty or surrounding whitespace)
// authenticates, as its own principal; a near miss never borrows another
// token's principal.
func FuzzAuthenticate(f *testing.F) {
	toks := newFuzzTokens(f)
	f.Add(uint8(0), uint8(0), uint8(1), "")
	f.Add(uint8(1), uint8(0x2a), uint8(3), "")
	f.Add(uint8(1), uint8(0xff), uint8(1), "2")
	f.Add(uint8(2), uint8(0x01), uint8(2), "x")
	f.Add(uint8(3), uint8(0x10), uint8(1), " \t")
	f.Add(uint8(0), uint8(0), uint8(0), "")
	f.Fuzz(func(t *testing.T, which, caseMask, spaces uint8, suffix string) {
		tok := fuzzTokens[int(which)%len(fuzzTokens)]
		scheme := []byte("Bearer")
		for i := range scheme {
			if caseMask&(1<<i) != 0 {
				scheme[i] ^= 0x20 // flip ASCII case
			}
		}
		v := string(scheme) + strings.Repeat(" ", int(spaces%4)) + tok.Token + suffix
		p, err := toks.Authenticate(authorization(v))
		exact := spaces%4 > 0 && strings.Trim(suffix, " \t") == ""
		if exact && (err != nil || !p.Equal(pr(tok.Subject, tok.Role))) {
			t.Fatalf("Authenticate(%q) = %v, %v; want %s's principal", v, p, err, tok.Token)
		}
		if !exact && err == nil {
			sent, _ := BearerToken(authorization(v))
			if want, ok := principalOf(sent); !ok || !p.Equal(want) {
				t.Fatalf("Authenticate(%q) = %v; only an exact configured token may authenticate", v, p)
			}
		}
	})
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		ca, cb := a[i], b[i]
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if 'A' <= cb && cb <= 'Z' {
			cb += 'a' - 'A'
		}
		if ca != cb {
			return false
		}
	}
	return true
}
