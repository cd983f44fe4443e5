package logging

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestRedact: secrets logged by key or inside text never reach the
// output, whatever the level or shape of the record.
func TestRedact(t *testing.T) {
	const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl"
	secrets := []string{"demo-alice-token", jwt, "sk_live_0001", "idem-key-42", "0123abcd0123abcd", "s3cr3t-app", "tail-secret-77", "sk_live_0002", "v1.k1.cGF5bG9hZA.bWFj-identity"}
	var buf bytes.Buffer
	l := New(&buf, "test", slog.LevelDebug)
	l.Info("request", "Authorization", "Bearer demo-alice-token", "path", "/api/x")
	l.Warn("upstream said: invalid token Bearer demo-alice-token")
	l.Error("failed", "err", errors.New("verify "+jwt+": bad"))
	l.Info("query", "url", "/api/x?access_token=sk_live_0001&a=1")
	l.Warn("upstream said: Bearer k3y!tail-secret-77 refused") // an API key may hold any non-space character
	l.Info("query", "url", "/api/x?access%5Ftoken=sk_live_0002")
	l.Info("write", "idempotency_key", "idem-key-42", "X-Signature", "0123abcd0123abcd")
	l.With("app_secret", "s3cr3t-app").Info("with")
	l.Info("metadata", "x-portico-identity", "v1.k1.cGF5bG9hZA.bWFj-identity")
	l.Info("group", slog.Group("hdr", "authorization", "Basic s3cr3t-app"))
	out := buf.String()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("output holds %q:\n%s", s, out)
		}
	}
	if !strings.Contains(out, `"path":"/api/x"`) || !strings.Contains(out, "a=1") || strings.Count(out, Redacted) < 11 {
		t.Errorf("redaction cut too much or too little:\n%s", out)
	}
}

func BenchmarkRedactPlain(b *testing.B) {
	for b.Loop() {
		redact("path", "/api/orders/ord-0001")
	}
}

// FuzzMayHoldSecret: both ways of mayHoldSecret, the scan and the
// searches, answer as the four case-folding searches they replaced did,
// for any bytes (Unicode case folding included: "BEARER", the Kelvin
// sign, invalid UTF-8), whatever the length.
func FuzzMayHoldSecret(f *testing.F) {
	for _, s := range []string{"", "/api/orders/ord-0001", "a=1", "eyJ", "ey", "BeArEr x", "BASIC", "baſic",
		"\u212a", "b\xff", "xxbasi", "bearer", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Safari/537.36",
		strings.Repeat("b", 40) + "asic", strings.Repeat("x", 40) + "ey" + "J"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := strings.Contains(s, "eyJ") || searchFold(s, "bearer") || searchFold(s, "basic") || strings.Contains(s, "=")
		for name, f := range map[string]func(string) bool{"mayHoldSecret": mayHoldSecret, "scanMarkers": scanMarkers, "searchMarkers": searchMarkers} {
			if got := f(s); got != want {
				t.Errorf("%s(%q) = %v, want %v", name, s, got, want)
			}
		}
	})
}

// searchFold is the marker search mayHoldSecret replaced.
func searchFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

func BenchmarkRedactAccessLine(b *testing.B) {
	for b.Loop() {
		redact("userAgent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36")
	}
}

// BenchmarkCutLongAccessLine is ReplaceAttr (cutLong) over the attributes
// of the edge's access line, as Direct calls it.
func BenchmarkCutLongAccessLine(b *testing.B) {
	as := access{method: "GET", path: "/api/inventory/kb-1", route: "/api/inventory/{sku}", status: 200,
		ms: 1.2, upstream: "inventory", client: "10.0.0.7", ua: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
		subject: "reader", respBytes: 61}.attrs()
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range as {
			cutLong(nil, a)
		}
	}
}

func BenchmarkIsSecretKey(b *testing.B) {
	keys := []string{"method", "path", "route", "status", "code", "durationMs", "upstream", "client",
		"userAgent", "subject", "requestBytes", "responseBytes"}
	for b.Loop() {
		for _, k := range keys {
			isSecretKey(k)
		}
	}
}

// BenchmarkMayHoldSecret sets scanBelow: the scan and the searches over
// strings of the access line's lengths.
func BenchmarkMayHoldSecret(b *testing.B) {
	for _, n := range []int{4, 8, 12, 16, 24, 32, 128} {
		s := strings.Repeat("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36", 2)[:n]
		b.Run(fmt.Sprintf("scan/%d", n), func(b *testing.B) {
			for b.Loop() {
				scanMarkers(s)
			}
		})
		b.Run(fmt.Sprintf("search/%d", n), func(b *testing.B) {
			for b.Loop() {
				searchMarkers(s)
			}
		})
	}
}
