package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Store in a Redis server shared by every edge. Build it with
// NewRedis.
type Redis struct {
	client redis.Scripter
	prefix string
	bans   BanPolicy
}

// NewRedis returns a Store in client's server; every key it writes starts
// with prefix (e.g. "portico:rl:"), and bans follow bans.
func NewRedis(client redis.Scripter, prefix string, bans BanPolicy) (*Redis, error) {
	if client == nil {
		return nil, fmt.Errorf("ratelimit: nil Redis client")
	}
	if err := bans.Validate(); err != nil {
		return nil, fmt.Errorf("ratelimit: %w", err)
	}
	return &Redis{client: client, prefix: prefix, bans: bans}, nil
}

// Allow decides req in one round trip (EVALSHA, falling back to EVAL once
// after a server restart). An error means Redis did not decide.
func (s *Redis) Allow(ctx context.Context, req *Request) (Decision, error) {
	if err := checkRequest(req); err != nil {
		return Decision{Denied: -1}, err
	}
	keys, args := s.prepare(req)
	v, err := script.Run(ctx, s.client, keys, args...).Int64Slice()
	return decode(req, v, err)
}

// prepare returns the script's keys and arguments for req.
func (s *Redis) prepare(req *Request) ([]string, []any) {
	n := len(req.Quotas)
	bans := s.bans.enabled() && req.Caller != ""
	keys := make([]string, n, n+2)
	args := make([]any, 0, 2+2*n+3)
	args = append(args, n, 0)
	for i, q := range req.Quotas {
		keys[i] = s.prefix + "q:" + q.Key
		b := bucketOf(q.Limit.withDefaults())
		args = append(args, micros(b.interval), micros(b.tau))
	}
	if bans {
		c := bucketOf(s.bans.counter())
		keys = append(keys, s.prefix+"ban:"+req.Caller, s.prefix+"refusals:"+req.Caller)
		args[1] = 1
		args = append(args, micros(c.interval), micros(c.tau), s.bans.Duration.Milliseconds())
	}
	return keys, args
}

// decode turns the script's reply into a Decision.
func decode(req *Request, v []int64, err error) (Decision, error) {
	n := len(req.Quotas)
	if err != nil {
		return Decision{Denied: -1}, fmt.Errorf("ratelimit: redis: %w", err)
	}
	if len(v) != 3+2*n {
		return Decision{Denied: -1}, fmt.Errorf("ratelimit: redis: script answered %d values, want %d", len(v), 3+2*n)
	}
	d := Decision{Denied: -1, N: n, RetryAfter: time.Duration(v[2]) * time.Microsecond}
	switch v[0] {
	case 1:
		d.Allowed = true
	case 0:
		d.Denied = int(v[1]) - 1
	default: // 2 banned, 3 banned by this refusal
		d.Banned = true
	}
	for i, q := range req.Quotas {
		d.Results[i] = Result{
			Limit:      q.Limit.withDefaults(),
			Remaining:  int(v[3+2*i]),
			ResetAfter: time.Duration(v[4+2*i]) * time.Microsecond,
		}
	}
	return d, nil
}

// micros formats a nanosecond count in microseconds, the script's unit.
func micros(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e3, 'f', 3, 64)
}

// script decides a Request: the GCRA of gcra.go in microseconds on
// Redis's clock, all quotas or none, then the ban bookkeeping.
//
//	KEYS  quota keys 1..n, then (bans) the ban key and the refusal-count key
//	ARGV  n, bans (0/1), interval and tau of each quota (µs), then (bans)
//	      the refusal counter's interval and tau (µs) and the ban (ms)
//	reply status (1 allowed, 0 refused, 2 banned, 3 banned by this refusal),
//	      the refusing quota (1-based) or 0, retry after (µs), then
//	      remaining and reset after (µs) of each quota
//
// A tat is stored with "%.3f": Lua's default number format keeps 14
// digits, too few for microseconds since the epoch.
var script = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local n = tonumber(ARGV[1])
local bans = ARGV[2] == "1"

local tats = {}
local got = {}
if n > 0 then
  got = redis.call("MGET", unpack(KEYS, 1, n))
end
for i = 1, n do
  tats[i] = math.max(tonumber(got[i]) or now, now)
end

local function reply(status, index, retry, fill)
  local out = {status, index, math.ceil(retry)}
  for i = 1, n do
    local interval = tonumber(ARGV[1 + 2 * i])
    local tau = tonumber(ARGV[2 + 2 * i])
    local tat = fill[i]
    out[#out + 1] = math.floor((now + tau - tat) / interval)
    out[#out + 1] = math.floor(tat - now)
  end
  return out
end

if bans then
  local left = redis.call("PTTL", KEYS[n + 1])
  if left > 0 then
    return reply(2, 0, left * 1000, tats)
  end
end

local nexts = {}
for i = 1, n do
  local interval = tonumber(ARGV[1 + 2 * i])
  local tau = tonumber(ARGV[2 + 2 * i])
  local nxt = tats[i] + interval
  local allow_at = nxt - tau
  if now < allow_at then
    if bans then
      local c_interval = tonumber(ARGV[3 + 2 * n])
      local c_tau = tonumber(ARGV[4 + 2 * n])
      local ban_ms = tonumber(ARGV[5 + 2 * n])
      local c_tat = math.max(tonumber(redis.call("GET", KEYS[n + 2]) or now), now)
      local c_next = c_tat + c_interval
      if now < c_next - c_tau then
        redis.call("DEL", KEYS[n + 2])
        redis.call("SET", KEYS[n + 1], "1", "PX", ban_ms)
        return reply(3, 0, ban_ms * 1000, tats)
      end
      redis.call("SET", KEYS[n + 2], string.format("%.3f", c_next), "PX", math.ceil((c_next - now) / 1000) + 1)
    end
    return reply(0, i, allow_at - now, tats)
  end
  nexts[i] = nxt
end

for i = 1, n do
  redis.call("SET", KEYS[i], string.format("%.3f", nexts[i]), "PX", math.ceil((nexts[i] - now) / 1000) + 1)
end
return reply(1, 0, 0, nexts)
`)
