package config

import "time"

// AuthConfig configures who may call: the credentials the edge accepts
// (API keys, JWTs, signed apps) and the policy of which roles may call
// which route. With no credential configured and no WithAuthenticator,
// every /api request is 401.
//
// Secrets are references (see SecretRef): "sha256:<hex>" (API keys only),
// "env:NAME", "file:/path", or plaintext, which loads with a warning
// unless AllowPlaintextSecrets is set (the dev profile sets it).
type AuthConfig struct {
	// Tokens are legacy static bearer tokens, plaintext in the config:
	// they keep loading, as API keys, with a warning. Prefer APIKeys.
	Tokens []TokenConfig `yaml:"tokens,omitempty"`
	// APIKeys are bearer API keys, stored as references.
	APIKeys []APIKeyConfig `yaml:"api_keys,omitempty"`
	// JWT, when its issuer is set, accepts JWT bearer tokens.
	JWT JWTConfig `yaml:"jwt,omitempty"`
	// SignedApps accepts HMAC-signed requests from these apps.
	SignedApps SignedAppsConfig `yaml:"signed_apps,omitempty"`
	// Policy grants roles routes. Absent means the built-in roles (admin:
	// everything; reader: every GET; customer: GET the catalogue, GET and
	// POST orders). A route no rule covers is denied to everyone, and
	// check-config warns about it.
	Policy []PolicyRuleConfig `yaml:"policy,omitempty"`
	// MaxTokenBytes bounds a bearer token; longer is 401 before any
	// parsing. Zero means auth.DefaultMaxTokenBytes (8 KiB).
	MaxTokenBytes int `yaml:"max_token_bytes,omitempty"`
	// AllowPlaintextSecrets silences the warning about plaintext secrets
	// (auth.tokens, plaintext keys and app secrets): the dev profile's demo
	// credentials. False (the default) warns at startup and in check-config.
	AllowPlaintextSecrets bool `yaml:"allow_plaintext_secrets,omitempty"`
}

// TokenConfig is one legacy static bearer token.
type TokenConfig struct {
	// Token is the secret, sent as "Authorization: Bearer <token>".
	// Required, unique, no whitespace.
	Token string `yaml:"token"`
	// Subject is the caller's identity passed to upstreams, e.g. "alice".
	// Required, printable ASCII.
	Subject string `yaml:"subject"`
	// Role is a role the policy names (admin, reader or customer under
	// the built-in policy). Required.
	Role string `yaml:"role"`
}

// APIKeyConfig is one API key, sent as "Authorization: Bearer <key>".
type APIKeyConfig struct {
	// Key is a SecretRef: "sha256:<64 hex digits>" (the SHA-256 of the key:
	// `printf %s "$KEY" | sha256sum`), "env:NAME", "file:/path", or the
	// key in plaintext (warns). Required; keys must be unique.
	Key string `yaml:"key"`
	// Subject is the caller's identity, e.g. "partner-acme". Required.
	Subject string `yaml:"subject"`
	// Roles the key holds; a service receives the first the policy grants
	// for the route called. At least one.
	Roles []string `yaml:"roles"`
	// Tenant and Plan describe the caller (rate limits key on Plan).
	// Optional.
	Tenant string `yaml:"tenant,omitempty"`
	Plan   string `yaml:"plan,omitempty"`
	// NotAfter is the RFC 3339 instant after which the key is refused
	// (CREDENTIALS_EXPIRED). Empty means no expiry. To rotate, add the new
	// key and give the old one a NotAfter: both work until then.
	NotAfter string `yaml:"not_after,omitempty"`
}

// JWTConfig accepts JWT bearer tokens (RFC 7519) signed by the keys of one
// issuer's JWK Set. Unset (no issuer) means JWTs are not accepted.
type JWTConfig struct {
	// Issuer is the required iss claim. Setting it turns JWTs on.
	Issuer string `yaml:"issuer,omitempty"`
	// Audience lists accepted aud values; a token must name one.
	// Required with an issuer.
	Audience []string `yaml:"audience,omitempty"`
	// Algorithms is the allow-list: RS256/384/512, PS256/384/512,
	// ES256/384/512, EdDSA. Required. HS* and none are refused.
	Algorithms []string `yaml:"algorithms,omitempty"`
	// JWKSURL is the JWK Set's http(s) URL, fetched on first use and
	// refreshed after RefreshInterval or for an unknown kid (at most once
	// per MinRefresh); while it is unreachable the keys fetched last keep
	// working and unknown kids fail. Exactly one of JWKSURL and JWKSFile.
	JWKSURL string `yaml:"jwks_url,omitempty"`
	// JWKSFile is a JWK Set file, read when the config loads.
	JWKSFile string `yaml:"jwks_file,omitempty"`
	// Leeway is the clock skew allowed on exp, nbf and iat. Zero means
	// auth.DefaultLeeway (30s); at most 5m.
	Leeway time.Duration `yaml:"leeway,omitempty"`
	// Timeout bounds one JWKS fetch. Zero means 5s.
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// RefreshInterval: keys older than this are refetched. Zero means 1h.
	RefreshInterval time.Duration `yaml:"refresh_interval,omitempty"`
	// MinRefresh is the least time between two fetches. Zero means 30s.
	MinRefresh time.Duration `yaml:"min_refresh,omitempty"`
	// Claims maps claims to the principal; empty names mean sub, roles,
	// tenant and plan. A dotted name reaches into an object
	// ("realm_access.roles"); roles may be an array or a space-separated
	// string.
	Claims ClaimsConfig `yaml:"claims,omitempty"`
	// SharedSubjects puts a token's subject in the namespace of the
	// subjects the config names (API keys, signed apps): a token with sub
	// "alice" is then the API-key user alice. False (the default) keeps
	// them apart: the principal's subject is "jwt:" + sub, which is what
	// services own orders by and what limits.subject_plans must name.
	SharedSubjects bool `yaml:"shared_subjects,omitempty"`
}

// ClaimsConfig names the claims a JWT principal is read from.
type ClaimsConfig struct {
	// Subject is the claim holding the principal's subject (a string).
	// Empty means "sub".
	Subject string `yaml:"subject,omitempty"`
	// Roles is the claim holding the roles: an array of strings or one
	// space-separated string. Empty means "roles".
	Roles string `yaml:"roles,omitempty"`
	// Tenant is the claim holding the tenant (a string). Empty means
	// "tenant"; a token without it has no tenant.
	Tenant string `yaml:"tenant,omitempty"`
	// Plan is the claim holding the plan rate limits key on (a string).
	// Empty means "plan"; a token without it has the default plan.
	Plan string `yaml:"plan,omitempty"`
}

// SignedAppsConfig accepts HMAC-SHA256 signed requests (X-App-Id,
// X-Timestamp, X-Nonce, X-Signature; see the README).
type SignedAppsConfig struct {
	// Window is how far X-Timestamp may be from the edge's clock, either
	// way; nonces are remembered for twice as long. Zero means 300s; at
	// most 15m.
	Window time.Duration `yaml:"window,omitempty"`
	// Apps are the apps that may sign. An id may repeat with another
	// secret, to rotate: both verify until the old one's not_after.
	Apps []AppConfig `yaml:"apps,omitempty"`
}

// AppConfig is one signed app's secret and principal.
type AppConfig struct {
	// ID is sent as X-App-Id: 1-64 of [A-Za-z0-9._~-]. Required.
	ID string `yaml:"id"`
	// Secret is a SecretRef ("env:NAME", "file:/path" or plaintext, which
	// warns), at least 16 bytes. A hash cannot sign, so no "sha256:".
	Secret string `yaml:"secret"`
	// Subject, Roles, Tenant, Plan: as for APIKeyConfig.
	Subject string   `yaml:"subject"`
	Roles   []string `yaml:"roles"`
	Tenant  string   `yaml:"tenant,omitempty"`
	Plan    string   `yaml:"plan,omitempty"`
	// NotAfter is the RFC 3339 instant after which this secret is refused.
	NotAfter string `yaml:"not_after,omitempty"`
}

// PolicyRuleConfig grants roles the routes Allow selects.
type PolicyRuleConfig struct {
	// Roles are the roles the rule grants; required, each a known role.
	Roles []string `yaml:"roles"`
	// Allow are the selectors of the routes granted. A selector is
	// "[METHOD ]TARGET" (package gateway/route/selector): TARGET is "*"
	// (every route), a path template ("/api/orders/{id}"), a route group
	// ("/api/orders/**": that template and every one below it), an RPC
	// ("portico.order.v1.OrderService/GetOrder", also with a leading "/"
	// or a "." before the method) or a service
	// ("portico.order.v1.OrderService/*"); METHOD narrows it to that
	// method. HEAD is not a METHOD here: a GET route serves HEAD too.
	// Required; each must select a route. A route no rule selects is
	// refused to everyone (403).
	Allow []string `yaml:"allow"`
}
