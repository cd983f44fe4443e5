package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// CORS defaults; see CORSConfig.
var (
	DefaultCORSHeaders = []string{"Authorization", "Content-Type", "Content-Encoding", "Idempotency-Key", "Grpc-Timeout", "Prefer",
		"Traceparent", "X-Trace-Id", "X-App-Id", "X-Timestamp", "X-Nonce", "X-Signature",
		"If-Match", "If-None-Match"}
	DefaultCORSExposed = []string{"X-Trace-Id", "Location", "Retry-After", "Idempotent-Replayed", "Preference-Applied", "WWW-Authenticate",
		"RateLimit", "RateLimit-Policy", "X-RateLimit-Limit", "X-RateLimit-Remaining",
		"ETag"}
)

// DefaultCORSMaxAge is how long a browser may cache a preflight answer.
const DefaultCORSMaxAge = 10 * time.Minute

// CORSConfig lets browsers on other origins call the edge (the Fetch
// standard's CORS protocol). No AllowedOrigins means no CORS: browsers
// on other origins are refused by the browser itself. A preflight
// (OPTIONS with Access-Control-Request-Method) is answered before
// authentication: 204 with the allowed methods and headers, or 403
// FORBIDDEN for an origin, method or header not allowed.
type CORSConfig struct {
	// AllowedOrigins are exact origins ("https://shop.example.com",
	// "http://localhost:3000"), or "*" for any. Empty turns CORS off.
	AllowedOrigins []string `yaml:"allowed_origins,omitempty"`
	// AllowedMethods a cross-origin request may use. Empty means every
	// method a route serves, read from the route table (HEAD with GET;
	// today GET, HEAD, POST and PATCH), so a preflight never advertises a
	// method no route has.
	AllowedMethods []string `yaml:"allowed_methods,omitempty"`
	// AllowedHeaders a cross-origin request may send (any case). Empty
	// means DefaultCORSHeaders.
	AllowedHeaders []string `yaml:"allowed_headers,omitempty"`
	// ExposedHeaders a browser script may read. Empty means
	// DefaultCORSExposed.
	ExposedHeaders []string `yaml:"exposed_headers,omitempty"`
	// MaxAge is how long a preflight answer may be cached. Zero means
	// DefaultCORSMaxAge; at most 24h.
	MaxAge time.Duration `yaml:"max_age,omitempty"`
}

func (c CORSConfig) validate(v *validator) {
	for i, o := range c.AllowedOrigins {
		if o == "*" {
			continue
		}
		if !isOrigin(o) {
			v.add(fmt.Sprintf("cors.allowed_origins[%d]", i), `want "*" or a lower-case origin such as https://shop.example.com or http://localhost:3000 (scheme://host[:port], no path), got %.80q`, o)
		}
	}
	for i, m := range c.AllowedMethods {
		if m != strings.ToUpper(m) || m == "" || strings.ContainsAny(m, " ,") {
			v.add(fmt.Sprintf("cors.allowed_methods[%d]", i), "want an upper-case method, got %q", m)
		}
	}
	for i, h := range slices.Concat(c.AllowedHeaders, c.ExposedHeaders) {
		if h == "" || strings.ContainsAny(h, " ,:") {
			v.add(fmt.Sprintf("cors headers[%d]", i), "want a header name, got %q", h)
		}
	}
	v.nonNegative("cors.max_age", c.MaxAge)
	if c.MaxAge > 24*time.Hour {
		v.add("cors.max_age", "at most 24h")
	}
}
