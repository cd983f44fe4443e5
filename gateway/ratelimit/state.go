package ratelimit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// This file holds read-only views of the stores for operators (the edge's
// admin API); nothing here is on a decision's path.

// Ban is one banned caller and when its ban ends.
type Ban struct {
	Caller string    `json:"caller"`
	Until  time.Time `json:"until"`
}

// MaxBanScan bounds the SCAN calls Redis.Bans makes (of 512 keys each), so
// listing bans in a large keyspace costs a bounded number of round trips.
const MaxBanScan = 32

// Bans returns up to limit callers banned now, sorted by when their bans
// end, and whether more are banned (which ones are left out is then
// unspecified). It holds one shard's lock at a time.
func (l *Local) Bans(limit int) (bans []Ban, more bool) {
	limit = max(limit, 0)
	now := l.clock(time.Time{})
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for caller, until := range s.banned {
			if until <= now {
				continue
			}
			if len(bans) == limit {
				more = true
				break
			}
			bans = append(bans, Ban{Caller: caller, Until: l.epoch.Add(time.Duration(until))})
		}
		s.mu.Unlock()
	}
	sortBans(bans)
	return bans, more
}

// Bans returns up to limit callers banned now in Redis, sorted by when
// their bans end, and whether more may be: it scans the ban keys (at most
// MaxBanScan SCAN calls) and reads their time to live, through client, a
// client of the server the store decides in.
func (s *Redis) Bans(ctx context.Context, client redis.Cmdable, limit int) (bans []Ban, more bool, err error) {
	limit = max(limit, 0)
	prefix := s.prefix + "ban:"
	var keys []string
	var cursor uint64
	for range MaxBanScan {
		var page []string
		page, cursor, err = client.Scan(ctx, cursor, globQuote(prefix)+"*", 512).Result()
		if err != nil {
			return nil, false, fmt.Errorf("ratelimit: redis: %w", err)
		}
		keys = append(keys, page...)
		if cursor == 0 {
			break
		}
	}
	more = cursor != 0
	slices.Sort(keys)
	keys = slices.Compact(keys) // SCAN may return a key twice
	if len(keys) > limit {
		keys, more = keys[:limit], true
	}
	pipe := client.Pipeline()
	ttls := make([]*redis.DurationCmd, len(keys))
	for i, k := range keys {
		ttls[i] = pipe.PTTL(ctx, k)
	}
	if len(keys) > 0 {
		if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
			return nil, false, fmt.Errorf("ratelimit: redis: %w", err)
		}
	}
	now := time.Now()
	for i, k := range keys {
		if d := ttls[i].Val(); d > 0 {
			bans = append(bans, Ban{Caller: strings.TrimPrefix(k, prefix), Until: now.Add(d)})
		}
	}
	sortBans(bans)
	return bans, more, nil
}

// Shared returns the Redis store the Pipeline sends to.
func (p *Pipeline) Shared() *Redis { return p.store }

// Local returns the Failover's local store: the fallback, and the copy of
// the bans seen in the shared store.
func (f *Failover) Local() *Local { return f.local }

// sortBans sorts bans by when they end, then by caller.
func sortBans(bans []Ban) {
	slices.SortFunc(bans, func(a, b Ban) int {
		if c := a.Until.Compare(b.Until); c != 0 {
			return c
		}
		return strings.Compare(a.Caller, b.Caller)
	})
}

// globQuote escapes the glob characters of a SCAN MATCH pattern.
func globQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\^`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
