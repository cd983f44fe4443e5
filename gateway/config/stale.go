package config

import (
	"time"

	"github.com/portico-gateway/portico/gateway/stale"
)

// Defaults and bounds of stale-if-error (gateway/stale.go).
const (
	// DefaultStaleMaxBytes bounds the copies an edge keeps in memory.
	DefaultStaleMaxBytes = 32 << 20
	// DefaultStaleRedisTimeout bounds each call to Redis for a copy.
	DefaultStaleRedisTimeout = stale.DefaultTimeout
	// DefaultStaleRedisPrefix starts every copy's key in Redis.
	DefaultStaleRedisPrefix = stale.DefaultPrefix
	// MaxStaleAge bounds a route's max_stale: a copy older than a day is
	// no longer "possibly out of date".
	MaxStaleAge = 24 * time.Hour
)

// StaleConfig bounds the copies the edge keeps of GET answers so that an
// RPC opted in by its (portico.api.v1.edge) stale_if_error option, or by
// routes.overrides, can be answered from a copy while its upstream fails
// (RFC 5861). The section absent means every default: the routes the
// protos opt in keep and serve copies, within DefaultStaleMaxBytes.
type StaleConfig struct {
	// MaxBytes bounds the memory the copies take, counting each copy's
	// key, body and Content-Type: past it the least recently used copy is
	// dropped, and a single answer larger than a quarter of it is never
	// kept. Zero means DefaultStaleMaxBytes (32 MiB); negative keeps no
	// copy, which turns stale answers off on every route.
	MaxBytes int64 `yaml:"max_bytes,omitempty"`
	// Redis tunes sharing copies through the redis section's server,
	// when one is set: every edge writes its copies there (in the
	// background) and reads one there when it has none itself. Redis
	// failing never fails a request: the edge then uses its own copies.
	Redis StaleRedisConfig `yaml:"redis,omitempty"`
}

// StaleRedisConfig tunes the copies kept in Redis.
type StaleRedisConfig struct {
	// Timeout bounds each call; after a failed one Redis is skipped for a
	// second. Zero means DefaultStaleRedisTimeout (50ms).
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// Prefix starts every key. Empty means DefaultStaleRedisPrefix.
	Prefix string `yaml:"prefix,omitempty"`
	// Disabled keeps copies in each edge's memory only, even with a redis
	// section.
	Disabled bool `yaml:"disabled,omitempty"`
}

// StaleOverride changes one GET route's stale-if-error permission.
type StaleOverride struct {
	// MaxStale is how old a copy may be when it is answered. Zero keeps
	// the RPC's option (none: off); negative turns stale answers off for
	// the route; positive turns them on, also for an RPC without the
	// option. At most MaxStaleAge (24h).
	MaxStale time.Duration `yaml:"max_stale,omitempty"`
	// Scope says whom a copy may be answered to: "caller" (only the
	// caller, by tenant and subject, whose request it answered) or
	// "public" (any caller the policy lets in with the same role). Empty
	// keeps the RPC's option's scope, or "caller" without one.
	Scope string `yaml:"scope,omitempty"`
}

// Scopes of a stale copy (StaleOverride.Scope).
const (
	ScopeCaller = "caller"
	ScopePublic = "public"
)

func (c StaleConfig) validate(v *validator) {
	v.nonNegative("stale.redis.timeout", c.Redis.Timeout)
}

func (o StaleOverride) validate(v *validator, p string) {
	if o.MaxStale > MaxStaleAge {
		v.add(p+".max_stale", "at most %v, got %v", MaxStaleAge, o.MaxStale)
	}
	if o.Scope != "" && o.Scope != ScopeCaller && o.Scope != ScopePublic {
		v.add(p+".scope", `want "caller" or "public", got %q`, o.Scope)
	}
}
