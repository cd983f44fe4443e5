package ratelimit

import "time"

// bucket is one GCRA bucket's arithmetic in nanoseconds. tat is the
// theoretical arrival time: when the bucket is full again; a tat at or
// before now (0 for a key never seen) is a full bucket. The Redis script
// mirrors it in microseconds.
type bucket struct {
	interval int64 // T: the time one request's quota takes to come back
	tau      int64 // T * Burst: how far ahead of now tat may run
}

func bucketOf(l Limit) bucket {
	t := int64(l.interval())
	return bucket{interval: t, tau: t * int64(l.Burst)}
}

// take decides one request at now: the bucket's new tat and, on a refusal,
// how long until the request would fit.
func (b bucket) take(tat, now int64) (next int64, ok bool, retry int64) {
	tat = max(tat, now)
	next = tat + b.interval
	if allowAt := next - b.tau; now < allowAt {
		return tat, false, allowAt - now
	}
	return next, true, 0
}

// result is the quota's state with tat at now.
func (b bucket) result(l Limit, tat, now int64) Result {
	tat = max(tat, now)
	return Result{
		Limit:      l,
		Remaining:  int((now + b.tau - tat) / b.interval),
		ResetAfter: time.Duration(tat - now),
	}
}
