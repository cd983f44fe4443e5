package nonce

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrUnavailable is wrapped by Claim's error when Redis did not answer:
// the nonce is unchecked and the request must be refused (fail closed).
var ErrUnavailable = errors.New("nonce: store unavailable")

// DefaultTimeout bounds each Claim unless the caller's context is shorter.
const DefaultTimeout = 50 * time.Millisecond

// UnavailableRetryAfter is the Retry-After of the 503 answered when Claim
// fails.
const UnavailableRetryAfter = time.Second

// Redis is a nonce store in Redis. Build it with NewRedis.
type Redis struct {
	client  redis.Scripter
	prefix  string
	timeout time.Duration
}

// NewRedis returns a store writing keys prefix+key in client's server;
// timeout bounds each Claim (zero means DefaultTimeout).
func NewRedis(client redis.Scripter, prefix string, timeout time.Duration) (*Redis, error) {
	if client == nil {
		return nil, errors.New("nonce: nil Redis client")
	}
	if timeout < 0 {
		return nil, fmt.Errorf("nonce: timeout must not be negative, got %s", timeout)
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	return &Redis{client: client, prefix: prefix, timeout: timeout}, nil
}

// Claim records key for ttl and reports whether it was fresh (never
// claimed within its ttl). An error wraps ErrUnavailable: fail closed.
func (s *Redis) Claim(ctx context.Context, key string, ttl time.Duration) (fresh bool, err error) {
	return s.ClaimToken(ctx, key, "", ttl)
}

// ClaimToken is Claim, recording token (nonce.TokenStore): a key that
// already holds token, not empty, counts as fresh.
func (s *Redis) ClaimToken(ctx context.Context, key, token string, ttl time.Duration) (fresh bool, err error) {
	if ttl < time.Millisecond {
		return false, fmt.Errorf("nonce: ttl %s is under a millisecond", ttl)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	n, err := claimScript.Run(ctx, s.client, []string{s.prefix + key}, token, ttl.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return n == 1, nil
}

// claimScript claims KEYS[1] for ARGV[2] ms with the value ARGV[1] (a
// token, or "" for none): 1 when it was free or already held the same
// token, else 0.
var claimScript = redis.NewScript(`
local token = ARGV[1]
if redis.call("SET", KEYS[1], token, "NX", "PX", ARGV[2]) then return 1 end
if token ~= "" and redis.call("GET", KEYS[1]) == token then return 1 end
return 0
`)
