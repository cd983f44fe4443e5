package config

import (
	"net/url"
	"strings"
)

// ProblemsConfig configures the problem details the edge answers with
// (RFC 9457). The whole section absent keeps the relative type URIs.
type ProblemsConfig struct {
	// TypeBase prefixes every problem's type URI in place of the default
	// "/problems/", e.g. "https://api.example.com/problems/" gives
	// "https://api.example.com/problems/upstream-timeout". Set it when
	// clients reach the edge under a path prefix or another host (an
	// ingress that maps /shop/ to the edge), where the relative default,
	// resolved against the request's URL, would miss the edge's pages. It
	// must be an absolute http(s) URI ending in "/", without query or
	// fragment; serve the edge's /problems pages there. Empty means
	// problem.TypeBase ("/problems/", a path on the edge).
	TypeBase string `yaml:"type_base,omitempty"`
}

// validate checks type_base's form.
func (p ProblemsConfig) validate(v *validator) {
	if p.TypeBase == "" {
		return
	}
	u, err := url.Parse(p.TypeBase)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" ||
		u.User != nil || !strings.HasSuffix(u.Path, "/") {
		v.add("problems.type_base", `want an absolute http(s) URI ending in "/", without user, query or fragment (e.g. "https://api.example.com/problems/"), got %q`, p.TypeBase)
	}
}
