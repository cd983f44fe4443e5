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
	client  redis.Cmdable
	prefix  string
	timeout time.Duration
}

// NewRedis returns a store writing keys prefix+key in client's server;
// timeout bounds each Claim (zero means DefaultTimeout).
func NewRedis(client redis.Cmdable, prefix string, timeout time.Duration) (*Redis, error) {
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
	if ttl < time.Millisecond {
		return false, fmt.Errorf("nonce: ttl %s is under a millisecond", ttl)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ok, err := s.client.SetNX(ctx, s.prefix+key, 1, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return ok, nil
}
