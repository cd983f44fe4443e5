package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// MaxReassertBans bounds the bans a Failover writes back after an outage
// (one script run); when more are known, which are left out is
// unspecified.
const MaxReassertBans = 1000

// BanWriter is a shared store that can be told bans it may have lost: a
// Failover writes the bans its local store holds back to it when it
// answers again after an outage (a Redis restarted empty would lift
// them otherwise).
type BanWriter interface {
	WriteBans(ctx context.Context, bans []BanLeft) error
}

// BanLeft is a banned caller and how long its ban has left.
type BanLeft struct {
	Caller string
	Left   time.Duration
}

var (
	_ BanWriter = (*Redis)(nil)
	_ BanWriter = (*Pipeline)(nil)
)

// WriteBans sets each caller's ban to end no sooner than Left from now
// on Redis's clock, in one script run; a longer ban Redis holds stays.
func (s *Redis) WriteBans(ctx context.Context, bans []BanLeft) error {
	if len(bans) == 0 || !s.bans.enabled() {
		return nil
	}
	keys := make([]string, len(bans))
	args := make([]any, len(bans))
	for i, b := range bans {
		keys[i], args[i] = s.prefix+"ban:"+b.Caller, b.Left.Microseconds()
	}
	if err := banScript.Run(ctx, s.client, keys, args...).Err(); err != nil {
		return fmt.Errorf("ratelimit: redis: %w", err)
	}
	return nil
}

// WriteBans writes through the Pipeline's store and client.
func (p *Pipeline) WriteBans(ctx context.Context, bans []BanLeft) error {
	return p.store.WriteBans(ctx, bans)
}

// banScript: KEYS are ban keys, ARGV the µs each ban has left; a ban key
// holds its end in µs on Redis's clock ("%.3f", as script writes it).
var banScript = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
for i = 1, #KEYS do
  local left = tonumber(ARGV[i])
  local until_ = now + left
  if (tonumber(redis.call("GET", KEYS[i])) or 0) < until_ then
    redis.call("SET", KEYS[i], string.format("%.3f", until_), "PX", math.ceil(left / 1000) + 1)
  end
end
return 0
`)

// bansLeft returns up to MaxReassertBans bans the local store holds, with
// the time each has left.
func (l *Local) bansLeft() []BanLeft {
	bans, _ := l.Bans(MaxReassertBans)
	now := l.epoch.Add(time.Duration(l.clock(time.Time{})))
	out := make([]BanLeft, 0, len(bans))
	for _, b := range bans {
		if left := b.Until.Sub(now); left > 0 {
			out = append(out, BanLeft{Caller: b.Caller, Left: left})
		}
	}
	return out
}
