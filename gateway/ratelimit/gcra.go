package ratelimit

import (
	"math/bits"
	"time"
)

// bucket is one GCRA bucket's arithmetic in nanoseconds. tat is the
// theoretical arrival time: when the bucket is full again; a tat at or
// before now is a full bucket, and so is a key never seen. The Redis
// script mirrors it in microseconds.
type bucket struct {
	interval int64  // T: the time one request's quota takes to come back
	tau      int64  // T * Burst: how far ahead of now tat may run
	inv      uint64 // (2^64-1) / T: divides by T with a multiplication; 0: divide
}

// bucketOf returns l's arithmetic; prepared, it also divides by T with a
// multiplication (worth it for a bucket decided many times).
func bucketOf(l Limit, prepared bool) bucket {
	t := int64(l.interval())
	b := bucket{interval: t, tau: t * int64(l.Burst)}
	if prepared {
		b.inv = ^uint64(0) / uint64(t)
	}
	return b
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
		Remaining:  int(b.per(now + b.tau - tat)),
		ResetAfter: time.Duration(tat - now),
	}
}

// per returns x / interval for x <= tau (0 for x <= 0: a tat past
// now+tau, which a decision at an earlier time than the last one can meet),
// by a multiplication: with
// inv = floor((2^64-1)/T), x*inv/2^64 lies in (x/T - 1, x/T], so its
// integer part is the quotient or one less, which one comparison fixes.
// A division is 10 to 40 cycles; this is a few.
func (b bucket) per(x int64) int64 {
	if x <= 0 {
		return 0
	}
	if b.inv == 0 {
		return x / b.interval
	}
	q, _ := bits.Mul64(uint64(x), b.inv)
	if int64(q+1)*b.interval <= x {
		q++
	}
	return int64(q)
}
