package ratelimit

import (
	"context"
	"fmt"
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
	var d Decision
	b := s.newBatch(1)
	b.add(req)
	err := s.run(ctx, s.client, b, func(_ int, v []int64) ([]int64, error) {
		var err error
		d, v, err = decode(req, v)
		return v, err
	})
	if err != nil {
		return Decision{Denied: -1}, err
	}
	return d, nil
}

// run sends b as one script run through c and hands each request's part
// of the reply, in order, to each.
func (s *Redis) run(ctx context.Context, c redis.Scripter, b *batch, each func(i int, v []int64) ([]int64, error)) error {
	v, err := script.Run(ctx, c, b.keys, b.args()...).Int64Slice()
	if err != nil {
		return fmt.Errorf("ratelimit: redis: %w", err)
	}
	for i := range b.n {
		if v, err = each(i, v); err != nil {
			return err
		}
	}
	if len(v) != 0 {
		return fmt.Errorf("ratelimit: redis: script answered %d values too many", len(v))
	}
	return nil
}

// batch is one script run's keys and arguments for n Requests: each
// distinct key once (a route group's or the global quota, shared by
// most requests, is read and written once per run), and each distinct
// limit once.
type batch struct {
	s      *Redis
	n      int
	keys   []string
	index  map[string]int // key -> its 1-based place in keys
	limits []any          // interval and tau (ns) of each distinct limit
	limIdx map[bucket]int // limit -> its 1-based place in limits
	reqs   []any          // per request: quotas, ban key, then (key, limit) per quota
}

func (s *Redis) newBatch(n int) *batch {
	return &batch{s: s, keys: make([]string, 0, 3*n+2), index: make(map[string]int, 3*n+2),
		limIdx: map[bucket]int{}, reqs: make([]any, 0, n*(2+2*MaxQuotas))}
}

// add appends req to b.
func (b *batch) add(req *Request) {
	bk := 0
	if b.s.bans.enabled() && req.Caller != "" {
		// The refusal-count key always follows its ban key.
		if bk = b.key(b.s.prefix + "ban:" + req.Caller); bk == len(b.keys) {
			b.key(b.s.prefix + "refusals:" + req.Caller)
		}
	}
	b.reqs = append(b.reqs, len(req.Quotas), bk)
	for i := range req.Quotas {
		_, bu := req.Quotas[i].arith()
		li, ok := b.limIdx[bu]
		if !ok {
			b.limits = append(b.limits, bu.interval, bu.tau)
			li = len(b.limits) / 2
			b.limIdx[bu] = li
		}
		b.reqs = append(b.reqs, b.key(b.s.prefix+"q:"+req.Quotas[i].Key), li)
	}
	b.n++
}

func (b *batch) key(k string) int {
	if i, ok := b.index[k]; ok {
		return i
	}
	b.keys = append(b.keys, k)
	b.index[k] = len(b.keys)
	return len(b.keys)
}

// args returns the script's ARGV.
func (b *batch) args() []any {
	var c bucket
	var ban int64
	if b.s.bans.enabled() {
		c, ban = bucketOf(b.s.bans.counter(), false), int64(b.s.bans.Duration)
	}
	args := make([]any, 0, 5+len(b.limits)+len(b.reqs))
	args = append(args, b.n, len(b.limits)/2, c.interval, c.tau, ban)
	args = append(args, b.limits...)
	return append(args, b.reqs...)
}

// decode takes req's Decision from the head of the script's reply and
// returns the rest.
func decode(req *Request, v []int64) (Decision, []int64, error) {
	n := len(req.Quotas)
	if len(v) < 3+n {
		return Decision{Denied: -1}, nil, fmt.Errorf("ratelimit: redis: script answered %d values, want at least %d", len(v), 3+n)
	}
	d := Decision{Denied: -1, N: n, RetryAfter: time.Duration(v[2])}
	switch v[0] {
	case 1:
		d.Allowed = true
	case 0:
		d.Denied = int(v[1]) - 1
	default: // 2 banned, 3 banned by this refusal
		d.Banned = true
	}
	for i := range req.Quotas {
		lim, b := req.Quotas[i].arith()
		ahead := max(v[3+i], 0) // tat - now
		d.Results[i] = Result{Limit: lim, Remaining: int(b.per(b.tau - ahead)), ResetAfter: time.Duration(ahead)}
	}
	return d, v[3+n:], nil
}

// script decides a batch of Requests, one after another as if each ran
// alone, on one reading of Redis's clock: the GCRA of gcra.go in
// microseconds, all quotas of a request or none, then the ban
// bookkeeping. Every key is read once (MGET) and every key that changed
// is written once, with an expiry when it is worth nothing more (a full
// bucket, an ended ban), so idle keys leave Redis by themselves.
//
//	KEYS  the batch's distinct keys: quota keys, and for each banned-or-not
//	      caller its ban key (value: the ban's end, µs) followed by its
//	      refusal-count key
//	ARGV  requests, limits, the refusal counter's interval and tau (ns),
//	      the ban's duration (ns); then interval and tau (ns) of each
//	      limit; then per request: its quota count n, its ban key's place
//	      (0: no bans), then n pairs of its quota key's place and limit's
//	      place
//	reply per request: status (1 allowed, 0 refused, 2 banned, 3 banned
//	      by this refusal), the refusing quota (1-based) or 0, retry after
//	      (ns), then each quota's tat - now (ns)
//
// A tat is stored with "%.3f": Lua's default number format keeps 14
// digits, too few for microseconds since the epoch.
var script = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nreq, nlim = tonumber(ARGV[1]), tonumber(ARGV[2])
local c_int, c_tau, ban = tonumber(ARGV[3]) / 1000, tonumber(ARGV[4]) / 1000, tonumber(ARGV[5]) / 1000
local ints, taus = {}, {}
local p = 6
for i = 1, nlim do
  ints[i], taus[i] = tonumber(ARGV[p]) / 1000, tonumber(ARGV[p + 1]) / 1000
  p = p + 2
end
local state = {}
if #KEYS > 0 then
  state = redis.call("MGET", unpack(KEYS))
  for i = 1, #KEYS do
    state[i] = tonumber(state[i])
  end
end

local dirty, out, keys, lims, nexts = {}, {}, {}, {}, {}
for r = 1, nreq do
  local n, bk = tonumber(ARGV[p]), tonumber(ARGV[p + 1])
  p = p + 2
  for i = 1, n do
    keys[i], lims[i] = tonumber(ARGV[p]), tonumber(ARGV[p + 1])
    p = p + 2
  end
  local status, index, retry = 1, 0, 0
  if bk > 0 and (state[bk] or 0) > now then
    status, retry = 2, state[bk] - now
  else
    for i = 1, n do
      local l = lims[i]
      local nxt = math.max(state[keys[i]] or now, now) + ints[l]
      if now < nxt - taus[l] then
        status, index, retry = 0, i, nxt - taus[l] - now
        break
      end
      nexts[i] = nxt
    end
    if status == 1 then
      for i = 1, n do
        state[keys[i]], dirty[keys[i]] = nexts[i], true
      end
    elseif bk > 0 then
      local rk = bk + 1
      local c = math.max(state[rk] or now, now) + c_int
      if now < c - c_tau then
        state[rk], state[bk], status, retry = false, now + ban, 3, ban
        dirty[bk] = true
      else
        state[rk] = c
      end
      dirty[rk] = true
    end
  end
  out[#out + 1] = status
  out[#out + 1] = index
  out[#out + 1] = math.ceil(retry * 1000)
  for i = 1, n do
    out[#out + 1] = math.floor(((state[keys[i]] or now) - now) * 1000)
  end
end

for k in pairs(dirty) do
  local v = state[k]
  if v then
    redis.call("SET", KEYS[k], string.format("%.3f", v), "PX", math.ceil((v - now) / 1000) + 1)
  else
    redis.call("DEL", KEYS[k])
  end
end
return out
`)
