package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"time"
)

// MaxQuotas is how many quotas one Request may name.
const MaxQuotas = 4

// ErrUnavailable is returned when the shared store cannot decide and the
// outage policy is to refuse (OutageClosed).
var ErrUnavailable = errors.New("ratelimit: shared store unavailable")

// Limit is a GCRA quota: Rate requests per Period, with up to Burst at once.
type Limit struct {
	// Rate is how many requests Period admits on average. Must be positive.
	Rate int
	// Period is the time Rate is counted over. Zero means one second.
	Period time.Duration
	// Burst is how many requests may pass at once after a quiet spell (the
	// bucket's depth). Zero means Rate.
	Burst int
}

// withDefaults fills Period and Burst.
func (l Limit) withDefaults() Limit {
	if l.Period == 0 {
		l.Period = time.Second
	}
	if l.Burst == 0 {
		l.Burst = l.Rate
	}
	return l
}

// Validate reports a Limit that cannot be enforced.
func (l Limit) Validate() error {
	switch {
	case l.Rate <= 0:
		return fmt.Errorf("rate must be positive, got %d", l.Rate)
	case l.Period < 0:
		return fmt.Errorf("period must not be negative, got %s", l.Period)
	case l.Burst < 0:
		return fmt.Errorf("burst must not be negative, got %d", l.Burst)
	case l.withDefaults().interval() <= 0:
		return fmt.Errorf("rate %d per %s is finer than a nanosecond", l.Rate, l.Period)
	case int64(l.withDefaults().interval()) > math.MaxInt64/2/int64(max(l.withDefaults().Burst, 1)):
		return fmt.Errorf("burst %d at %d per %s spans too long a time", l.Burst, l.Rate, l.Period)
	}
	return nil
}

// interval is the emission interval: the time one request's quota takes to
// come back.
func (l Limit) interval() time.Duration { return l.Period / time.Duration(l.Rate) }

// Quota is one Limit on one key.
type Quota struct {
	Key   string
	Limit Limit

	// Set by Prepare: the key's hash (keySeed) and the limit's GCRA
	// arithmetic (bucket.interval 0: not prepared).
	hash   uint64
	hashed bool
	bucket bucket
}

// keySeed hashes quota keys for every Local store of the process (random
// per process, so keys cannot be chosen to collide), which lets a Quota
// be hashed once, by Prepare, for every store.
var keySeed = maphash.MakeSeed()

// Prepare returns q with its key hashed and its limit's arithmetic done
// (Limit gets its defaults), so that a Local store deciding it spends
// neither per decision: for quotas built once and decided many times, such
// as a route group's or the global one. A prepared Quota's Key and Limit
// must not be changed; one that is not prepared works the same, at the
// cost of that work in every decision.
func (q Quota) Prepare() Quota {
	q.Limit = q.Limit.withDefaults()
	q.hash, q.hashed, q.bucket = maphash.String(keySeed, q.Key), true, bucketOf(q.Limit, true)
	return q
}

// For returns q on key: a Quota whose limit is prepared once (a plan's)
// keeps its arithmetic for every key it is given; the key is hashed when
// decided.
func (q Quota) For(key string) Quota {
	q.Key, q.hashed = key, false
	return q
}

// arith returns q's limit (defaults applied) and GCRA arithmetic.
func (q *Quota) arith() (Limit, bucket) {
	if q.bucket.interval != 0 {
		return q.Limit, q.bucket
	}
	lim := q.Limit.withDefaults()
	return lim, bucketOf(lim, false)
}

// keyHash returns q's key hash.
func (q *Quota) keyHash() uint64 {
	if q.hashed {
		return q.hash
	}
	return maphash.String(keySeed, q.Key)
}

// Request is what one request asks of the stores.
type Request struct {
	// Quotas are decided together, all or nothing; at most MaxQuotas.
	Quotas []Quota
	// Caller is the ban key; empty means bans do not apply.
	Caller string
	// Now, when set, is the time of the decision for a Local store, so a
	// caller that has read the clock already (the edge, when the request
	// arrived) spares the store a second reading; zero means the store
	// reads its own clock. Redis decides on Redis's clock and ignores it.
	Now time.Time
}

// Result is one quota's state after a decision.
type Result struct {
	// Limit is the quota's limit, defaults applied.
	Limit Limit
	// Remaining is how many more requests the quota admits right now.
	Remaining int
	// ResetAfter is when the bucket is full again (Remaining = Burst).
	ResetAfter time.Duration
}

// Decision is the answer to a Request.
type Decision struct {
	// Allowed is true when every quota admitted the request.
	Allowed bool
	// Denied is the index in Request.Quotas of the quota that refused;
	// -1 when allowed or banned.
	Denied int
	// Banned is true when the caller is banned (then Denied is -1).
	Banned bool
	// RetryAfter is when a retry can succeed: for a refusal, when the
	// refusing quota has room; for a ban, when it ends. Zero when allowed.
	RetryAfter time.Duration
	// Results holds each quota's state, in Request.Quotas order; on a
	// refusal or a ban the quotas are as they were (nothing was consumed).
	Results [MaxQuotas]Result
	// N is how many Results are set.
	N int
}

// BanPolicy bans a caller whose requests are refused Threshold times within
// Window, for Duration. The zero value bans nobody.
type BanPolicy struct {
	Threshold int
	Window    time.Duration
	Duration  time.Duration
}

// enabled reports whether the policy bans anyone.
func (b BanPolicy) enabled() bool { return b.Threshold > 0 && b.Window > 0 && b.Duration > 0 }

// counter is the refusal-counting bucket of the policy.
func (b BanPolicy) counter() Limit {
	return Limit{Rate: b.Threshold, Period: b.Window, Burst: b.Threshold}
}

// Validate reports a policy that cannot be enforced.
func (b BanPolicy) Validate() error {
	if b.Threshold < 0 || b.Window < 0 || b.Duration < 0 {
		return fmt.Errorf("ban threshold, window and duration must not be negative")
	}
	if b.enabled() {
		return b.counter().Validate()
	}
	return nil
}

// Store decides Requests; Local, Redis and Failover are Stores.
type Store interface {
	Allow(ctx context.Context, req *Request) (Decision, error)
}

// checkRequest reports a Request a store cannot decide.
func checkRequest(req *Request) error {
	if len(req.Quotas) > MaxQuotas {
		return fmt.Errorf("ratelimit: %d quotas, at most %d", len(req.Quotas), MaxQuotas)
	}
	return nil
}
