package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseSignatureHeaders: any four header values. The parser never
// panics, fails only with ErrMalformed, and what it accepts round-trips:
// the id and nonce as sent, the timestamp's digits, the signature's hex.
func FuzzParseSignatureHeaders(f *testing.F) {
	f.Add("app", "1767225600", "nonce-000000000001", strings.Repeat("ab", 32))
	f.Add("", "", "", "")
	f.Add("a b", "-1", "short", "zz")
	f.Add("app", "000000000000", "nonce~_.-00000000", strings.Repeat("0", 64))
	f.Add("app", "99999999999999999999", "nonce-000000000001", strings.Repeat("AB", 32))
	f.Fuzz(func(t *testing.T, id, ts, nonce, sig string) {
		h := http.Header{}
		h.Set(HeaderAppID, id)
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderNonce, nonce)
		h.Set(HeaderSignature, sig)
		got, err := ParseSignatureHeaders(h)
		if err != nil {
			if !errors.Is(err, ErrMalformed) || strings.Contains(Detail(err), sig) && len(sig) > 8 {
				t.Fatalf("ParseSignatureHeaders = %v; want ErrMalformed with no signature in the detail", err)
			}
			return
		}
		if got.AppID != id || got.Nonce != nonce || strconv.FormatInt(got.Timestamp, 10) != strings.TrimLeft(ts, "0") && got.Timestamp != 0 ||
			hex.EncodeToString(got.Signature[:]) != sig {
			t.Fatalf("ParseSignatureHeaders(%q, %q, %q, %q) = %+v", id, ts, nonce, sig, got)
		}
	})
}

// FuzzCanonicalString: seven lines for inputs without newlines; the
// query line is a sorted permutation of the non-empty pairs, whatever
// order they came in; then the body hash and the idempotency key.
func FuzzCanonicalString(f *testing.F) {
	f.Add("POST", "/api/orders", "b=2&a=1", "1767225600", "nonce", []byte(`{"x":1}`), "k1")
	f.Add("GET", "/api/inventory", "", "0", "n", []byte(nil), "")
	f.Add("GET", "/", "&&a=&=b&a", "1", "n", []byte("x"), "")
	f.Fuzz(func(t *testing.T, method, path, query, ts, nonce string, body []byte, key string) {
		for _, s := range []string{method, path, query, ts, nonce, key} {
			if strings.Contains(s, "\n") {
				return
			}
		}
		sum := sha256.Sum256(body)
		lines := strings.Split(CanonicalString(method, path, query, ts, nonce, sum, key), "\n")
		if len(lines) != 7 || lines[0] != method || lines[1] != path || lines[3] != ts || lines[4] != nonce ||
			lines[5] != hex.EncodeToString(sum[:]) || lines[6] != key {
			t.Fatalf("CanonicalString lines = %q", lines)
		}
		want := slices.DeleteFunc(strings.Split(query, "&"), func(p string) bool { return p == "" })
		slices.Sort(want)
		if lines[2] != strings.Join(want, "&") {
			t.Fatalf("query line %q, want %q", lines[2], strings.Join(want, "&"))
		}
		rev := strings.Split(query, "&")
		slices.Reverse(rev)
		if SortedQuery(strings.Join(rev, "&")) != lines[2] || SortedQuery(lines[2]) != lines[2] {
			t.Fatalf("SortedQuery depends on the order of %q", query)
		}
	})
}

// FuzzChain: any Authorization value(s), query and signature header. The
// chain never panics, returns only its sentinel errors, refuses a query
// naming access_token and two Authorization headers as ErrMalformed, and
// never puts the presented token in a detail.
func FuzzChain(f *testing.F) {
	keys, err := NewTokens(fuzzTokens)
	if err != nil {
		f.Fatal(err)
	}
	c := &Chain{Keys: keys, MaxTokenBytes: 64}
	f.Add("Bearer admin-secret", "", false, false)
	f.Add("Bearer admin-secret", "access_token=x", false, false)
	f.Add("Bearer admin-secret", "a=1&access%5Ftoken=x", false, false)
	f.Add("Bearer eyJhbGciOiJub25lIn0.e30.", "", false, false)
	f.Add("Bearer "+strings.Repeat("x", 100), "", false, false)
	f.Add("Bearer alice-secret", "", true, false)
	f.Add("Bearer alice-secret", "", false, true)
	f.Fuzz(func(t *testing.T, authz, query string, twice, signed bool) {
		r, _ := http.NewRequest(http.MethodGet, "http://edge/api/x", nil)
		r.URL.RawQuery = query
		r.Header["Authorization"] = []string{authz}
		if twice {
			r.Header["Authorization"] = append(r.Header["Authorization"], authz)
		}
		if signed {
			r.Header.Set(HeaderAppID, "app")
		}
		p, err := c.Authenticate(r)
		malformed := twice || signed || strings.Contains(query, "access_token") && queryCredentials(query) != nil
		switch {
		case malformed && !errors.Is(err, ErrMalformed):
			t.Fatalf("Authenticate(%q, ?%s, twice %v, signed %v) = %v; want ErrMalformed", authz, query, twice, signed, err)
		case err == nil && p.Subject == "":
			t.Fatal("success without a subject")
		case err != nil && !slices.ContainsFunc([]error{ErrNoCredentials, ErrInvalidCredentials, ErrMalformed, ErrExpired}, func(e error) bool { return errors.Is(err, e) }):
			t.Fatalf("Authenticate = %v, not a sentinel", err)
		}
		if tok, ok := bearer(authz); ok && len(tok) >= 8 && strings.Contains(Detail(err), tok) {
			t.Fatalf("detail %q holds the token", Detail(err))
		}
	})
}
