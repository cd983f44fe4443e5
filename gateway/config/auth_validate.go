package config

import (
	"crypto/sha256"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/route"
)

// Bounds of the auth section.
const (
	maxJWTLeeway       = 5 * time.Minute
	maxSignatureWindow = 15 * time.Minute
)

// PolicyRules returns the configured rules, or the built-in ones.
func (a AuthConfig) PolicyRules() []auth.Rule {
	if len(a.Policy) == 0 {
		return auth.DefaultRules()
	}
	rules := make([]auth.Rule, len(a.Policy))
	for i, r := range a.Policy {
		rules[i] = auth.Rule{Roles: r.Roles, Allow: r.Allow}
	}
	return rules
}

// grantedRoles returns every role some rule grants.
func (a AuthConfig) grantedRoles() []string {
	var out []string
	for _, r := range a.PolicyRules() {
		out = append(out, r.Roles...)
	}
	return out
}

// validate checks the auth section; secrets are resolved, so a missing
// variable or file is reported here.
func (a AuthConfig) validate(v *validator) {
	granted := a.grantedRoles()
	roles := func(p string, rs []string) {
		if len(rs) == 1 && strings.HasSuffix(p, ".role") { // a legacy token's one role
			if !slices.Contains(granted, rs[0]) {
				v.add(p, "want a role the policy grants (%s), got %q", strings.Join(slices.Compact(slices.Sorted(slices.Values(granted))), ", "), rs[0])
			}
			return
		}
		if len(rs) == 0 {
			v.add(p, "at least one role is required")
		}
		if len(rs) > auth.MaxRoles {
			v.add(p, "at most %d roles", auth.MaxRoles)
		}
		for j, r := range rs {
			if !auth.ValidRole(r) {
				v.add(fmt.Sprintf("%s[%d]", p, j), "want 1-32 of [a-z0-9_-] starting with a letter, got %q", r)
			} else if !slices.Contains(granted, r) {
				v.add(fmt.Sprintf("%s[%d]", p, j), "role %q is granted nothing by the policy", r)
			}
		}
	}
	describe := func(p, subject, tenant, plan string) {
		if !auth.ValidSubject(subject) {
			v.add(p+".subject", "want 1-255 printable ASCII characters, got %q", subject)
		}
		if tenant != "" && !auth.ValidSubject(tenant) {
			v.add(p+".tenant", "want 1-255 printable ASCII characters")
		}
		if plan != "" && !auth.ValidSubject(plan) {
			v.add(p+".plan", "want 1-255 printable ASCII characters")
		}
	}
	seen := map[[sha256.Size]byte]string{}
	for i, t := range a.Tokens {
		p := fmt.Sprintf("auth.tokens[%d]", i)
		if t.Token == "" || hasSpace(t.Token) {
			v.add(p+".token", "must be non-empty, without whitespace")
		} else if prev, dup := seen[hashOf(t.Token)]; dup {
			v.add(p+".token", "repeats %s", prev)
		}
		seen[hashOf(t.Token)] = p + ".token"
		describe(p, t.Subject, "", "")
		roles(p+".role", []string{t.Role})
	}
	for i, k := range a.APIKeys {
		p := fmt.Sprintf("auth.api_keys[%d]", i)
		if s, err := ResolveSecret(k.Key, true); err != nil {
			v.add(p+".key", "%v", err)
		} else if prev, dup := seen[s.Hash]; dup {
			v.add(p+".key", "repeats %s", prev)
		} else {
			seen[s.Hash] = p + ".key"
		}
		describe(p, k.Subject, k.Tenant, k.Plan)
		roles(p+".roles", k.Roles)
		validTime(v, p+".not_after", k.NotAfter)
	}
	a.JWT.validate(v)
	a.SignedApps.validate(v, describe, roles)
	if a.MaxTokenBytes < 0 {
		v.add("auth.max_token_bytes", "must not be negative")
	}
	for i, r := range a.Policy {
		p := fmt.Sprintf("auth.policy[%d]", i)
		if len(r.Roles) == 0 {
			v.add(p+".roles", "at least one role is required")
		}
		for j, role := range r.Roles {
			if !auth.ValidRole(role) {
				v.add(fmt.Sprintf("%s.roles[%d]", p, j), "want 1-32 of [a-z0-9_-] starting with a letter, got %q", role)
			} else if role == auth.RoleService {
				v.add(fmt.Sprintf("%s.roles[%d]", p, j), "role %q is reserved for Portico's services calling one another; the edge never grants it", role)
			}
		}
		if len(r.Allow) == 0 {
			v.add(p+".allow", "at least one selector is required")
		}
		for j, sel := range r.Allow {
			if _, err := auth.ParseAllow(sel); err != nil {
				v.add(fmt.Sprintf("%s.allow[%d]", p, j), "%q: %v", sel, err)
			}
		}
	}
}

func (j JWTConfig) validate(v *validator) {
	if j.Issuer == "" {
		if len(j.Audience) > 0 || len(j.Algorithms) > 0 || j.JWKSURL != "" || j.JWKSFile != "" {
			v.add("auth.jwt.issuer", "required when any other auth.jwt field is set")
		}
		return
	}
	if len(j.Audience) == 0 {
		v.add("auth.jwt.audience", "at least one audience is required")
	}
	if len(j.Algorithms) == 0 {
		v.add("auth.jwt.algorithms", "at least one algorithm is required")
	}
	for i, a := range j.Algorithms {
		if !slices.Contains(auth.AsymmetricAlgorithms, a) {
			v.add(fmt.Sprintf("auth.jwt.algorithms[%d]", i), "want one of %v (no HS*, no none), got %q", auth.AsymmetricAlgorithms, a)
		}
	}
	switch {
	case (j.JWKSURL == "") == (j.JWKSFile == ""):
		v.add("auth.jwt", "exactly one of jwks_url and jwks_file is required")
	case j.JWKSURL != "":
		if u, err := url.Parse(j.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			v.add("auth.jwt.jwks_url", "want an http(s) URL, got %q", j.JWKSURL)
		}
	default:
		if _, err := auth.NewJWKSFile(j.JWKSFile); err != nil {
			v.add("auth.jwt.jwks_file", "%v", err)
		}
	}
	v.nonNegative("auth.jwt.leeway", j.Leeway)
	if j.Leeway > maxJWTLeeway {
		v.add("auth.jwt.leeway", "at most %v", maxJWTLeeway)
	}
	v.nonNegative("auth.jwt.timeout", j.Timeout)
	v.nonNegative("auth.jwt.refresh_interval", j.RefreshInterval)
	v.nonNegative("auth.jwt.min_refresh", j.MinRefresh)
}

func (s SignedAppsConfig) validate(v *validator, describe func(p, subject, tenant, plan string), roles func(string, []string)) {
	v.nonNegative("auth.signed_apps.window", s.Window)
	if s.Window > maxSignatureWindow {
		v.add("auth.signed_apps.window", "at most %v", maxSignatureWindow)
	}
	for i, a := range s.Apps {
		p := fmt.Sprintf("auth.signed_apps.apps[%d]", i)
		if sec, err := ResolveSecret(a.Secret, false); err != nil {
			v.add(p+".secret", "%v", err)
		} else if len(sec.Value) < 16 {
			v.add(p+".secret", "at least 16 bytes")
		}
		if !auth.ValidAppID(a.ID) {
			v.add(p+".id", "want 1-64 of [A-Za-z0-9._~-]")
		}
		describe(p, a.Subject, a.Tenant, a.Plan)
		roles(p+".roles", a.Roles)
		validTime(v, p+".not_after", a.NotAfter)
	}
}

func validTime(v *validator, p, s string) {
	if s == "" {
		return
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		v.add(p, "want an RFC 3339 time such as 2027-01-31T00:00:00Z, got %q", s)
	}
}

// AuthWarnings are what an operator should see but may run with:
// plaintext secrets outside the dev profile, a JWK Set over plain http
// from another host, and routes no policy rule covers (denied to
// everyone).
func (c Config) AuthWarnings(routes []*route.Route) []string {
	var out []string
	a := c.Auth
	if !a.AllowPlaintextSecrets {
		for i := range a.Tokens {
			out = append(out, fmt.Sprintf("auth.tokens[%d]: a plaintext token; move it to auth.api_keys as sha256:, env: or file:", i))
		}
		for i, k := range a.APIKeys {
			if s, err := ResolveSecret(k.Key, true); err == nil && s.Plaintext {
				out = append(out, fmt.Sprintf("auth.api_keys[%d].key: a plaintext key; use sha256:, env: or file:", i))
			}
		}
		for i, app := range a.SignedApps.Apps {
			if s, err := ResolveSecret(app.Secret, false); err == nil && s.Plaintext {
				out = append(out, fmt.Sprintf("auth.signed_apps.apps[%d].secret: a plaintext secret; use env: or file:", i))
			}
		}
	}
	if plainRemoteHTTP(a.JWT.JWKSURL) {
		out = append(out, "auth.jwt.jwks_url: plain http lets anyone on the path substitute the signing keys (and so mint any token); use https")
	}
	pol := auth.DefaultPolicy(routes)
	if len(a.Policy) > 0 {
		pol, _ = auth.NewPolicy(a.PolicyRules(), routes)
	}
	if pol != nil {
		for _, rt := range pol.Uncovered() {
			out = append(out, fmt.Sprintf("auth.policy: no rule covers %s (%s): it is denied to everyone", rt.Key(), rt.RPC))
		}
	}
	return out
}

// plainRemoteHTTP reports whether raw is an http URL to a host other
// than the loopback (a local JWKS sidecar is fine over http).
func plainRemoteHTTP(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback())
}

func hashOf(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }

func hasSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n' {
			return true
		}
	}
	return false
}
