package logging

import (
	"regexp"
	"strings"
)

// Redacted replaces a secret in a log record.
const Redacted = "[REDACTED]"

// secretKeys are attribute keys whose values are secrets, whatever they
// hold; matched in any case, "-" and "_" ignored.
var secretKeys = map[string]bool{
	"authorization": true, "proxyauthorization": true, "cookie": true, "setcookie": true,
	"xsignature": true, "signature": true, "xapikey": true, "apikey": true,
	"idempotencykey": true, "idemkey": true, "token": true, "accesstoken": true,
	"jwt": true, "secret": true, "appsecret": true, "password": true, "nonce": true, "xnonce": true,
	"xporticoidentity": true, "assertion": true, // an identity assertion between processes
}

// secretPatterns find secrets inside any string: a bearer credential, a
// JWS compact token, a credential in a query string.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(bearer|basic)\s+\S+`), // an API key may hold any non-space character
	regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*`),
	regexp.MustCompile(`(?i)(access(_|%5f)token|api_key|apikey|signature)=[^&\s"]*`),
}

// redact is the one choke point every record of every process passes
// (the handler's ReplaceAttr): the value of a secret key becomes
// Redacted, and secret-shaped text inside any string is cut out. It is
// cheap for ordinary strings: a pattern runs only when its marker shows,
// and a key's secrecy is decided once (secretKey).
func redact(key, s string) (string, bool) {
	if secretKey(key) {
		return Redacted, s != Redacted
	}
	return redactValue(s)
}

// redactValue cuts secret-shaped text out of s, the value of a key that
// is not secret.
func redactValue(s string) (string, bool) {
	if !mayHoldSecret(s) {
		return s, false
	}
	out := s
	for i, re := range secretPatterns {
		out = re.ReplaceAllStringFunc(out, func(m string) string {
			if i == 1 {
				return Redacted
			}
			cut := strings.IndexAny(m, " \t=")
			for cut+1 < len(m) && (m[cut+1] == ' ' || m[cut+1] == '\t') {
				cut++
			}
			return m[:cut+1] + Redacted
		})
	}
	return out, out != s
}

// isSecretKey reports whether key names a secret: in secretKeys, in any
// case, "-" and "_" ignored. Records use secretKey, which remembers it.
func isSecretKey(key string) bool {
	if len(key) > 32 {
		return false
	}
	var b [32]byte
	n := 0
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '-' || c == '_':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b[n] = c
		n++
	}
	return secretKeys[string(b[:n])]
}

// mayHoldSecret reports whether s holds a marker of a secretPatterns
// match: "eyJ", "=", or "bearer" or "basic" in any case, the same answer
// as testing each marker anywhere in s (FuzzMayHoldSecret). Every string
// of every record goes through it: a short one is scanned once, byte by
// byte (scanMarkers); a longer one is searched for each marker with the
// vectorised strings.IndexByte and strings.Index (searchMarkers), several
// bytes a cycle, whose calls cost more than they save on a short string.
func mayHoldSecret(s string) bool {
	if len(s) < scanBelow {
		return scanMarkers(s)
	}
	return searchMarkers(s)
}

// scanBelow is the length from which mayHoldSecret searches rather than
// scans (BenchmarkMayHoldSecret: about where the two cost the same).
const scanBelow = 16

// scanMarkers is mayHoldSecret in one pass over s.
func scanMarkers(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '=':
			return true
		case 'e':
			if strings.HasPrefix(s[i:], "eyJ") {
				return true
			}
		case 'b', 'B':
			if hasPrefixFold(s[i:], "bearer") || hasPrefixFold(s[i:], "basic") {
				return true
			}
		}
	}
	return false
}

// searchMarkers is mayHoldSecret in one search per marker.
func searchMarkers(s string) bool {
	if strings.IndexByte(s, '=') >= 0 || strings.Contains(s, "eyJ") {
		return true
	}
	return hasAuthScheme(s, 'b') || hasAuthScheme(s, 'B')
}

// hasAuthScheme reports whether "bearer" or "basic", in any case, starts
// at an occurrence of b (their first letter, in one case) in s.
func hasAuthScheme(s string, b byte) bool {
	for {
		i := strings.IndexByte(s, b)
		if i < 0 {
			return false
		}
		s = s[i:]
		if hasPrefixFold(s, "bearer") || hasPrefixFold(s, "basic") {
			return true
		}
		s = s[1:]
	}
}

// hasPrefixFold is strings.HasPrefix under Unicode case folding, as
// a search under case folding tests each position: strings.EqualFold on
// len(prefix) bytes.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
