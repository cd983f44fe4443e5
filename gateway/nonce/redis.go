package nonce

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrUnavailable is wrapped by Claim's error when Redis did not answer:
// the nonce is unchecked and the request must be refused (fail closed).
var ErrUnavailable = errors.New("nonce: store unavailable")

// DefaultTimeout bounds each attempt of a Claim unless the caller's
// context is shorter. A claim fails closed, so it is more patient than a
// rate-limit decision (50ms, which fails open): on a loaded host a 50ms
// bound failed about a quarter of signed requests with Redis healthy.
const DefaultTimeout = 250 * time.Millisecond

// Attempts is how many times a Claim asks Redis when it does not answer
// (one retry): at most Attempts × the timeout in all. A retry is safe:
// each claim writes its own token, so a retry after a lost reply finds
// its own claim and is fresh, not a replay.
const Attempts = 2

// UnavailableRetryAfter is the Retry-After of the 503 answered when Claim
// fails.
const UnavailableRetryAfter = time.Second

// ErrDataLost is wrapped by Claim's error while the store refuses every
// claim because Redis lost its data (see the package doc).
var ErrDataLost = errors.New("nonce: Redis lost its data")

// UnavailableError is Claim's error: it wraps ErrUnavailable and the
// cause, and says why in words safe to show a client, and when to retry.
type UnavailableError struct {
	// Reason is why, for the 503's detail: no address, no server text.
	Reason string
	// RetryAfter is when a retry can succeed; zero means
	// UnavailableRetryAfter.
	RetryAfter time.Duration
	Err        error
}

func (e *UnavailableError) Error() string { return "nonce: store unavailable: " + e.Err.Error() }

// Unwrap returns ErrUnavailable and the cause.
func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// Redis is a nonce store in Redis. Build it with NewRedis.
type Redis struct {
	// failing is set while the last claim found Redis not answering.
	failing atomic.Bool
	// holdUntil is when the refusal after a data loss ends (Unix ms on the
	// edge's clock); zero when none was seen.
	holdUntil atomic.Int64
	client    redis.Scripter
	prefix    string
	timeout   time.Duration
	// epoch is the id of the store's epoch marker this store last saw
	// ("" before the first answer).
	epoch atomic.Pointer[string]
}

// NewRedis returns a store writing keys prefix+key, and its epoch marker
// prefix+"epoch", in client's server; timeout bounds each Claim (zero
// means DefaultTimeout).
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
// claimed within its ttl). An error is an *UnavailableError: fail closed.
func (s *Redis) Claim(ctx context.Context, key string, ttl time.Duration) (fresh bool, err error) {
	return s.ClaimToken(ctx, key, newToken(), ttl)
}

// newToken returns 32 random hex characters.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// ClaimToken is Claim, recording token (nonce.TokenStore): a key that
// already holds token, not empty, counts as fresh.
func (s *Redis) ClaimToken(ctx context.Context, key, token string, ttl time.Duration) (fresh bool, err error) {
	if ttl < time.Millisecond {
		return false, fmt.Errorf("nonce: ttl %s is under a millisecond", ttl)
	}
	known := ""
	if p := s.epoch.Load(); p != nil {
		known = *p
	}
	keys := []string{s.prefix + key, s.prefix + "epoch"}
	var v []any
	for range Attempts {
		actx, cancel := context.WithTimeout(ctx, s.timeout)
		v, err = claimScript.Run(actx, s.client, keys, token, ttl.Milliseconds(), known).Slice()
		cancel()
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		s.setFailing(true)
		return false, &UnavailableError{Reason: fmt.Sprintf("the nonce store did not answer within %s (%d attempts)", s.timeout, Attempts), Err: err}
	}
	s.setFailing(false)
	status, _ := v[0].(int64)
	epoch, _ := v[1].(string)
	wait, _ := v[2].(int64)
	if epoch != known {
		s.epoch.Store(&epoch)
	}
	if status < 0 {
		d := time.Duration(wait) * time.Millisecond
		s.holdUntil.Store(time.Now().Add(d).UnixMilli())
		return false, &UnavailableError{Reason: "the nonce store lost its data; signed requests are refused until every nonce used before the loss has expired",
			RetryAfter: d, Err: ErrDataLost}
	}
	return status == 1, nil
}

// Failing reports whether the last claim found Redis not answering
// (signed requests are refused meanwhile), for /health.
func (s *Redis) Failing() bool { return s.failing.Load() }

// Holding reports whether the store refuses claims after Redis lost its
// data, as the last refusal said.
func (s *Redis) Holding() bool { return time.Now().UnixMilli() < s.holdUntil.Load() }

func (s *Redis) setFailing(v bool) {
	if s.failing.Load() != v {
		s.failing.Store(v)
	}
}

// Timeout returns the bound of each attempt.
func (s *Redis) Timeout() time.Duration { return s.timeout }

// claimScript claims KEYS[1] for ARGV[2] ms with the value ARGV[1] (a
// token, or "" for none), after checking the store's epoch marker
// KEYS[2] against the epoch id the edge knows (ARGV[3], "" for none).
//
// The marker (a hash: id, the instant of its creation in µs on Redis's
// clock; from, the instant in ms from which claims are trusted) is made by
// the first claim that finds it missing: with no epoch known that is a new
// store, trusted at once; with one known, Redis lost its data (a restart
// without persistence, a failover, a flush), so nothing is trusted until
// one ttl has passed: by then every nonce claimed before the loss would
// have expired anyway. An edge that knew an older epoch than the marker
// it finds learns of a loss another edge may have taken for a new store,
// and holds from the marker's creation on.
//
// The reply is {status, epoch id, wait}: status 1 fresh (the key was free
// or already held the same token), 0 a replay, -1 refused for wait ms.
var claimScript = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local token, ttl, known = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local m = redis.call("HMGET", KEYS[2], "id", "from")
local id, from = m[1], tonumber(m[2]) or 0
if not id then
  id, from = t[1] .. string.format("%06d", tonumber(t[2])), now
  if known ~= "" then from = now + ttl end
  redis.call("HSET", KEYS[2], "id", id, "from", from)
elseif known ~= "" and id ~= known then
  local held = math.floor(tonumber(id) / 1000) + ttl
  if from < held then
    from = held
    redis.call("HSET", KEYS[2], "from", from)
  end
end
if now < from then return {-1, id, from - now} end
if redis.call("SET", KEYS[1], token, "NX", "PX", ARGV[2]) then return {1, id, 0} end
if token ~= "" and redis.call("GET", KEYS[1]) == token then return {1, id, 0} end
return {0, id, 0}
`)
