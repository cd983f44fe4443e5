package gateway

import "net/url"

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
		v.add("redis.url", "want redis://host:port[/db] or rediss://host:port[/db], got %q", r.URL)
	}
}
