package config

import (
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RedisConfig names the Redis server that edge instances share state
// through (rate-limit counters, bans, HMAC nonces). Empty means none: every
// edge keeps that state in its own memory.
type RedisConfig struct {
	// URL is a redis:// or rediss:// URL, as go-redis's ParseURL reads it,
	// for example "redis://127.0.0.1:6379/0".
	URL string `yaml:"url,omitempty"`
}

func (r RedisConfig) validate(v *validator) {
	if r.URL == "" {
		return
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		v.add("redis.url", "want redis://host:port[/db] or rediss://host:port[/db], got %q", redactURLText(r.URL))
		return
	}
	// What the edge will do with it at start and at every reload, so
	// check-config refuses what a reload would (an unknown ?option, a bad
	// database number).
	if _, err := redis.ParseURL(r.URL); err != nil {
		msg := err.Error()
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "REDACTED")
		}
		v.add("redis.url", "%s (in %q)", msg, redactURLText(r.URL))
	}
}

// redactURLText hides a URL's password for an error message, also when the
// URL does not parse (redactURL then returns it unchanged): everything
// between "://" and the last "@" of the authority becomes "REDACTED".
func redactURLText(v string) string {
	if r := redactURL(v); r != v {
		return r
	}
	i := strings.Index(v, "://")
	if i < 0 {
		return v
	}
	auth := v[i+3:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	at := strings.LastIndex(auth, "@")
	if at < 0 {
		return v
	}
	return v[:i+3] + "REDACTED" + v[i+3+at:]
}
