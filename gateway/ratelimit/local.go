package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"sync"
	"time"
)

// DefaultMaxKeys bounds the keys a Local store holds, per kind (quota
// buckets, refusal counts, bans).
const DefaultMaxKeys = 100_000

// evictSample is how many keys an eviction looks at (Redis's approximated
// LRU samples 5): it removes the first full bucket or expired ban it meets,
// else the one of them closest to full.
const evictSample = 8

// Local is a Store in memory, bounded in keys. Build it with NewLocal.
type Local struct {
	shards   []shard
	seed     maphash.Seed
	perShard int
	bans     BanPolicy
	now      func() time.Time
	epoch    time.Time
}

type shard struct {
	mu       sync.Mutex
	tats     map[string]*int64 // quota key -> tat, updated in place
	refusals map[string]int64  // caller -> tat of its refusal-count bucket
	banned   map[string]int64  // caller -> end of its ban
	_        [40]byte          // keeps neighbouring shards' mutexes off one cache line
}

// LocalOption configures NewLocal.
type LocalOption func(*Local)

// WithMaxKeys bounds the keys held (per kind); zero means DefaultMaxKeys.
func WithMaxKeys(n int) LocalOption { return func(l *Local) { l.perShard = n } }

// WithBans sets the ban policy; the default bans nobody.
func WithBans(b BanPolicy) LocalOption { return func(l *Local) { l.bans = b } }

// WithClock replaces time.Now (tests that cannot use testing/synctest).
func WithClock(now func() time.Time) LocalOption { return func(l *Local) { l.now = now } }

// NewLocal returns an empty Local store.
func NewLocal(opts ...LocalOption) (*Local, error) {
	l := &Local{seed: maphash.MakeSeed(), now: time.Now}
	for _, o := range opts {
		o(l)
	}
	if l.perShard < 0 {
		return nil, fmt.Errorf("ratelimit: max keys must not be negative, got %d", l.perShard)
	}
	if err := l.bans.Validate(); err != nil {
		return nil, fmt.Errorf("ratelimit: %w", err)
	}
	maxKeys := cmpOr(l.perShard, DefaultMaxKeys)
	n := 1
	for n < 32 && maxKeys/(n*2) >= 64 { // shards of at least 64 keys
		n *= 2
	}
	l.shards, l.perShard = make([]shard, n), maxKeys/n
	for i := range l.shards {
		s := &l.shards[i]
		s.tats, s.refusals, s.banned = map[string]*int64{}, map[string]int64{}, map[string]int64{}
	}
	l.epoch = l.now()
	return l, nil
}

// Len returns how many keys the store holds, of every kind.
func (l *Local) Len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.tats) + len(s.refusals) + len(s.banned)
		s.mu.Unlock()
	}
	return n
}

// Ban bans caller for d from now (Failover copies bans seen in Redis).
func (l *Local) Ban(caller string, d time.Duration) {
	now := l.clock()
	s := l.shard(caller)
	s.mu.Lock()
	put(s.banned, caller, now+int64(d), l.perShard, now)
	s.mu.Unlock()
}

func (l *Local) clock() int64 { return int64(l.now().Sub(l.epoch)) }

func (l *Local) shard(key string) *shard {
	return &l.shards[l.index(key)]
}

func (l *Local) index(key string) int {
	if len(l.shards) == 1 {
		return 0
	}
	return int(maphash.String(l.seed, key) & uint64(len(l.shards)-1))
}

// Allow decides req. It never fails but for a Request with too many quotas.
func (l *Local) Allow(_ context.Context, req *Request) (Decision, error) {
	if err := checkRequest(req); err != nil {
		return Decision{Denied: -1}, err
	}
	var ls lockSet
	for i, q := range req.Quotas {
		ls.shard[i] = l.add(&ls, q.Key)
	}
	var caller *shard
	if l.bans.enabled() && req.Caller != "" {
		caller = l.add(&ls, req.Caller)
	}
	for j := 0; j < ls.n; j++ {
		l.shards[ls.idx[j]].mu.Lock()
	}
	d := l.decide(req, &ls, caller, l.clock())
	for j := ls.n - 1; j >= 0; j-- {
		l.shards[ls.idx[j]].mu.Unlock()
	}
	return d, nil
}

// lockSet is the shards a Request's keys live in: ls.shard[i] is quota i's,
// idx the distinct ones in ascending order, the order they are locked in
// (so two requests never wait on each other in a cycle).
type lockSet struct {
	shard [MaxQuotas]*shard
	idx   [MaxQuotas + 1]int
	n     int
}

// add returns key's shard and records it in ls.
func (l *Local) add(ls *lockSet, key string) *shard {
	i := l.index(key)
	j := 0
	for ; j < ls.n && ls.idx[j] < i; j++ {
	}
	if j == ls.n || ls.idx[j] != i {
		copy(ls.idx[j+1:ls.n+1], ls.idx[j:ls.n])
		ls.idx[j] = i
		ls.n++
	}
	return &l.shards[i]
}

// decide runs with the shards of req's keys locked.
func (l *Local) decide(req *Request, ls *lockSet, caller *shard, now int64) Decision {
	d := Decision{Denied: -1, N: len(req.Quotas)}
	bans := caller != nil
	if bans && len(caller.banned) > 0 {
		if until, ok := caller.banned[req.Caller]; ok && until > now {
			d.Banned, d.RetryAfter = true, time.Duration(until-now)
			l.current(req, ls, now, &d)
			return d
		}
	}
	var entries [MaxQuotas]*int64
	var next [MaxQuotas]int64
	for i, q := range req.Quotas {
		lim := q.Limit.withDefaults()
		b := bucketOf(lim)
		var tat int64
		if e := ls.shard[i].tats[q.Key]; e != nil {
			entries[i], tat = e, *e
		}
		tat, ok, retry := b.take(tat, now)
		if !ok {
			d.Denied, d.RetryAfter = i, time.Duration(retry)
			l.current(req, ls, now, &d)
			if bans {
				l.countRefusal(caller, req.Caller, now, &d)
			}
			return d
		}
		next[i] = tat
		d.Results[i] = b.result(lim, tat, now)
	}
	for i, q := range req.Quotas {
		if entries[i] != nil {
			*entries[i] = next[i]
			continue
		}
		m := ls.shard[i].tats
		if len(m) >= l.perShard {
			evictEntry(m, now)
		}
		e := new(int64)
		*e = next[i]
		m[q.Key] = e
	}
	d.Allowed = true
	return d
}

// current fills d.Results with the quotas' state, unchanged.
func (l *Local) current(req *Request, ls *lockSet, now int64, d *Decision) {
	for i, q := range req.Quotas {
		lim := q.Limit.withDefaults()
		var tat int64
		if e := ls.shard[i].tats[q.Key]; e != nil {
			tat = *e
		}
		d.Results[i] = bucketOf(lim).result(lim, tat, now)
	}
}

// countRefusal counts a refusal against caller and bans it when the count
// passes the threshold.
func (l *Local) countRefusal(s *shard, caller string, now int64, d *Decision) {
	tat, ok, _ := bucketOf(l.bans.counter()).take(s.refusals[caller], now)
	if ok {
		put(s.refusals, caller, tat, l.perShard, now)
		return
	}
	delete(s.refusals, caller)
	put(s.banned, caller, now+int64(l.bans.Duration), l.perShard, now)
	d.Banned, d.Denied, d.RetryAfter = true, -1, l.bans.Duration
}

// put sets m[key] = v, first evicting a key when key is new and m is full.
func put(m map[string]int64, key string, v int64, limit int, now int64) {
	if _, ok := m[key]; !ok && len(m) >= limit {
		evict(m, now)
	}
	m[key] = v
}

// evictEntry is evict for the quota buckets.
func evictEntry(m map[string]*int64, now int64) {
	victim, soonest, n := "", int64(math.MaxInt64), 0
	for k, t := range m {
		if *t <= now {
			delete(m, k)
			return
		}
		if *t < soonest {
			victim, soonest = k, *t
		}
		if n++; n == evictSample {
			break
		}
	}
	delete(m, victim)
}

// evict removes one key of m: among up to evictSample keys (map iteration
// starts at a random place), the first that has run out (a full bucket, an
// ended ban), else the one that runs out soonest.
func evict(m map[string]int64, now int64) {
	victim, soonest, n := "", int64(math.MaxInt64), 0
	for k, t := range m {
		if t <= now {
			delete(m, k)
			return
		}
		if t < soonest {
			victim, soonest = k, t
		}
		if n++; n == evictSample {
			break
		}
	}
	delete(m, victim)
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// banned reports whether req's caller is banned, without deciding quotas.
func (l *Local) banned(req *Request) (Decision, bool) {
	d := Decision{Denied: -1}
	if req.Caller == "" {
		return d, false
	}
	now := l.clock()
	s := l.shard(req.Caller)
	s.mu.Lock()
	until, ok := s.banned[req.Caller]
	s.mu.Unlock()
	if ok && until > now {
		d.Banned, d.RetryAfter = true, time.Duration(until-now)
	}
	return d, d.Banned
}
