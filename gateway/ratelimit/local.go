package ratelimit

import (
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
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
//
// A decision hashes each quota key once (maphash): the hash picks the
// key's shard and is the key of the shard's bucket map, so no string is
// hashed twice. The shards of a Request's keys are locked together, in
// ascending order, for the whole decision: that is what makes it all or
// nothing. The ban check and the refusal count lock the caller's shard on
// their own, outside the quotas' locks, and only when they have work: no
// ban recorded at all (the usual state) skips the check.
type Local struct {
	shards   []shard
	mask     uint64
	perShard int
	bans     BanPolicy
	counter  bucket       // the bans' refusal-count bucket
	live     atomic.Int64 // bans recorded in every shard, ended ones included until removed
	now      func() time.Time
	epoch    time.Time
}

type shard struct {
	mu       sync.Mutex
	tats     map[uint64]*entry // quota key's hash -> its bucket (chained on a collision)
	keys     int               // buckets in tats, chained ones included
	refusals map[string]int64  // caller -> tat of its refusal-count bucket
	banned   map[string]int64  // caller -> end of its ban
	_        [24]byte          // keeps neighbouring shards' mutexes off one cache line
}

// entry is one quota key's bucket: its tat, updated in place.
type entry struct {
	key  string
	tat  int64
	next *entry // another key with the same 64-bit hash (rare)
}

// LocalOption configures NewLocal.
type LocalOption func(*Local)

// WithMaxKeys bounds the keys held (per kind); zero means DefaultMaxKeys.
func WithMaxKeys(n int) LocalOption { return func(l *Local) { l.perShard = n } }

// WithBans sets the ban policy; the default bans nobody.
func WithBans(b BanPolicy) LocalOption { return func(l *Local) { l.bans = b } }

// WithClock replaces time.Now (tests that cannot use testing/synctest).
// A Request's Now, when set, still wins.
func WithClock(now func() time.Time) LocalOption { return func(l *Local) { l.now = now } }

// NewLocal returns an empty Local store.
func NewLocal(opts ...LocalOption) (*Local, error) {
	l := &Local{}
	for _, o := range opts {
		o(l)
	}
	if l.perShard < 0 {
		return nil, fmt.Errorf("ratelimit: max keys must not be negative, got %d", l.perShard)
	}
	if err := l.bans.Validate(); err != nil {
		return nil, fmt.Errorf("ratelimit: %w", err)
	}
	if l.bans.enabled() {
		l.counter = bucketOf(l.bans.counter(), false)
	}
	maxKeys := cmp.Or(l.perShard, DefaultMaxKeys)
	n := 1
	for n < 32 && maxKeys/(n*2) >= 64 { // shards of at least 64 keys
		n *= 2
	}
	l.shards, l.perShard, l.mask = make([]shard, n), maxKeys/n, uint64(n-1)
	for i := range l.shards {
		s := &l.shards[i]
		s.tats, s.refusals, s.banned = map[uint64]*entry{}, map[string]int64{}, map[string]int64{}
	}
	l.epoch = time.Now()
	if l.now != nil {
		l.epoch = l.now()
	}
	return l, nil
}

// Len returns how many keys the store holds, of every kind.
func (l *Local) Len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += s.keys + len(s.refusals) + len(s.banned)
		s.mu.Unlock()
	}
	return n
}

// Ban bans caller for d from now (Failover copies bans seen in Redis).
func (l *Local) Ban(caller string, d time.Duration) {
	now := l.clock(time.Time{})
	s := l.shard(caller)
	s.mu.Lock()
	l.putBan(s, caller, now+int64(d), now)
	s.mu.Unlock()
}

// clock returns at, or when at is zero the store's clock, in nanoseconds
// since the store's epoch. The default clock is the monotonic one alone
// (time.Since reads it without the wall clock: half of time.Now's cost).
func (l *Local) clock(at time.Time) int64 {
	switch {
	case !at.IsZero():
		return int64(at.Sub(l.epoch))
	case l.now != nil:
		return int64(l.now().Sub(l.epoch))
	}
	return int64(time.Since(l.epoch))
}

func (l *Local) shard(key string) *shard {
	return &l.shards[maphash.String(keySeed, key)&l.mask]
}

// Allow decides req. It never fails but for a Request with too many quotas.
func (l *Local) Allow(_ context.Context, req *Request) (Decision, error) {
	if err := checkRequest(req); err != nil {
		return Decision{Denied: -1}, err
	}
	now := l.clock(req.Now)
	bans := l.bans.enabled() && req.Caller != ""
	var ban int64 // how long the caller's ban still runs, if it has one
	if bans && l.live.Load() > 0 {
		ban = l.banLeft(req.Caller, now)
	}
	var ls lockSet
	for i := range req.Quotas {
		ls.add(l, i, req.Quotas[i].keyHash())
	}
	for m := ls.mask; m != 0; m &= m - 1 {
		l.shards[bits.TrailingZeros32(m)].mu.Lock()
	}
	d := Decision{Denied: -1, N: len(req.Quotas)}
	l.decide(&d, req, &ls, now, ban)
	for m := ls.mask; m != 0; m &= m - 1 {
		l.shards[bits.TrailingZeros32(m)].mu.Unlock()
	}
	if bans && d.Denied >= 0 {
		l.countRefusal(req.Caller, now, &d)
	}
	return d, nil
}

// lockSet is the shards a Request's keys live in: quota i's key hashes to
// hash[i] in shard[i]; mask has a bit per distinct shard (at most 32), and
// they are locked in ascending order (so two requests never wait on each
// other in a cycle).
type lockSet struct {
	hash  [MaxQuotas]uint64
	shard [MaxQuotas]*shard
	mask  uint32
}

// add records quota i's key hash h and its shard.
func (ls *lockSet) add(l *Local, i int, h uint64) {
	k := h & l.mask
	ls.hash[i], ls.shard[i] = h, &l.shards[k]
	ls.mask |= 1 << k
}

// decide runs with the shards of req's keys locked. ban is how long the
// caller's ban still runs (0: none).
func (l *Local) decide(d *Decision, req *Request, ls *lockSet, now, ban int64) {
	n := len(req.Quotas)
	var (
		entries [MaxQuotas]*entry
		tats    [MaxQuotas]int64
		next    [MaxQuotas]int64
		bs      [MaxQuotas]bucket
		lims    [MaxQuotas]Limit
	)
	for i := range n {
		lims[i], bs[i] = req.Quotas[i].arith()
		tats[i] = now // absent: a full bucket
		if e := ls.shard[i].find(ls.hash[i], req.Quotas[i].Key); e != nil {
			entries[i], tats[i] = e, e.tat
		}
	}
	if ban > 0 {
		d.Banned, d.RetryAfter = true, time.Duration(ban)
		fill(d, n, &lims, &bs, &tats, now)
		return
	}
	for i := range n {
		tat, ok, retry := bs[i].take(tats[i], now)
		if !ok {
			d.Denied, d.RetryAfter = i, time.Duration(retry)
			fill(d, n, &lims, &bs, &tats, now)
			return
		}
		next[i] = tat
	}
	for i := range n {
		if entries[i] != nil {
			entries[i].tat = next[i]
		} else {
			ls.shard[i].insert(ls.hash[i], req.Quotas[i].Key, next[i], l.perShard, now)
		}
	}
	d.Allowed = true
	fill(d, n, &lims, &bs, &next, now)
}

// fill sets d.Results from the quotas' tats.
func fill(d *Decision, n int, lims *[MaxQuotas]Limit, bs *[MaxQuotas]bucket, tats *[MaxQuotas]int64, now int64) {
	for i := range n {
		d.Results[i] = bs[i].result(lims[i], tats[i], now)
	}
}

// find returns key's bucket, or nil.
func (s *shard) find(h uint64, key string) *entry {
	for e := s.tats[h]; e != nil; e = e.next {
		if e.key == key {
			return e
		}
	}
	return nil
}

// insert sets key's tat, first evicting a bucket when key is new and the
// shard is full.
func (s *shard) insert(h uint64, key string, tat int64, limit int, now int64) {
	if e := s.find(h, key); e != nil { // the same key twice in one Request
		e.tat = tat
		return
	}
	if s.keys >= limit {
		s.evict(now)
	}
	s.tats[h] = &entry{key: key, tat: tat, next: s.tats[h]}
	s.keys++
}

// evict removes one bucket: among up to evictSample (map iteration starts
// at a random place), the first that is full, else the one closest to full.
func (s *shard) evict(now int64) {
	var victim uint64
	soonest, n := int64(math.MaxInt64), 0
	for h, e := range s.tats {
		if e.tat <= now {
			s.drop(h, e)
			return
		}
		if e.tat < soonest {
			victim, soonest = h, e.tat
		}
		if n++; n == evictSample {
			break
		}
	}
	if e := s.tats[victim]; e != nil {
		s.drop(victim, e)
	}
}

// drop removes e, the first bucket of h's chain.
func (s *shard) drop(h uint64, e *entry) {
	if e.next != nil {
		s.tats[h] = e.next
	} else {
		delete(s.tats, h)
	}
	s.keys--
}

// banLeft returns how long caller's ban still runs, or 0; it removes an
// ended one.
func (l *Local) banLeft(caller string, now int64) int64 {
	s := l.shard(caller)
	s.mu.Lock()
	defer s.mu.Unlock()
	until, ok := s.banned[caller]
	if !ok {
		return 0
	}
	if until <= now {
		delete(s.banned, caller)
		l.live.Add(-1)
		return 0
	}
	return until - now
}

// countRefusal counts a refusal against caller and bans it when the count
// passes the threshold. It runs after the decision, outside the quotas'
// locks: the refusal consumed nothing, so only the caller's shard is
// involved.
func (l *Local) countRefusal(caller string, now int64, d *Decision) {
	s := l.shard(caller)
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, ok := s.refusals[caller]
	if !ok {
		prev = now
	}
	tat, ok, _ := l.counter.take(prev, now)
	if ok {
		put(s.refusals, caller, tat, l.perShard, now)
		return
	}
	delete(s.refusals, caller)
	l.putBan(s, caller, now+int64(l.bans.Duration), now)
	d.Banned, d.Denied, d.RetryAfter = true, -1, l.bans.Duration
}

// putBan records caller's ban until until in s (locked), keeping l.live.
func (l *Local) putBan(s *shard, caller string, until, now int64) {
	if _, ok := s.banned[caller]; !ok {
		if len(s.banned) >= l.perShard {
			evict(s.banned, now)
			l.live.Add(-1)
		}
		l.live.Add(1)
	}
	s.banned[caller] = until
}

// put sets m[key] = v, first evicting a key when key is new and m is full.
func put(m map[string]int64, key string, v int64, limit int, now int64) {
	if _, ok := m[key]; !ok && len(m) >= limit {
		evict(m, now)
	}
	m[key] = v
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

// banned reports whether req's caller is banned, without deciding quotas.
func (l *Local) banned(req *Request) (Decision, bool) {
	d := Decision{Denied: -1}
	if req.Caller == "" || l.live.Load() == 0 {
		return d, false
	}
	now := l.clock(req.Now)
	if left := l.banLeft(req.Caller, now); left > 0 {
		d.Banned, d.RetryAfter = true, time.Duration(left)
	}
	return d, d.Banned
}
