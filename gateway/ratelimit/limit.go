package ratelimit

import (
	"context"
	"errors"
	"fmt"
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
}

// Request is what one request asks of the stores.
type Request struct {
	// Quotas are decided together, all or nothing; at most MaxQuotas.
	Quotas []Quota
	// Caller is the ban key; empty means bans do not apply.
	Caller string
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
