package retry

import (
	"sync"
	"time"
)

// budgetBuckets is how many slices the sliding window is cut into: the
// window slides in steps of window/10.
const budgetBuckets = 10

// budget counts calls and retries over a sliding window of budgetBuckets
// buckets. One mutex guards it: a call takes it once (to count itself) and a
// retry once more; a lock-free ring would have to reset buckets with CAS
// loops for no measurable gain at these rates.
type budget struct {
	settings budgetSettings
	bucket   time.Duration
	start    time.Time

	mu      sync.Mutex
	buckets [budgetBuckets]budgetBucket
}

type budgetBucket struct {
	epoch   int64 // bucket widths since start (plus budgetBuckets) when last reset
	calls   float64
	retries float64
}

func newBudget(s budgetSettings) *budget {
	return &budget{settings: s, bucket: max(s.window/budgetBuckets, 1), start: time.Now()}
}

// current returns the bucket for now, reset if it last held an older epoch.
// b.mu must be held.
func (b *budget) current() (*budgetBucket, int64) {
	epoch := max(int64(time.Since(b.start)/b.bucket), 0) + budgetBuckets
	bk := &b.buckets[epoch%budgetBuckets]
	if bk.epoch != epoch {
		*bk = budgetBucket{epoch: epoch}
	}
	return bk, epoch
}

// call records the start of a call.
func (b *budget) call() {
	b.mu.Lock()
	bk, _ := b.current()
	bk.calls++
	b.mu.Unlock()
}

// tryRetry records a retry and reports true when the budget allows one.
func (b *budget) tryRetry() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	bk, epoch := b.current()
	var calls, retries float64
	for i := range b.buckets {
		if x := &b.buckets[i]; epoch-x.epoch < budgetBuckets {
			calls += x.calls
			retries += x.retries
		}
	}
	allowed := b.settings.ratio*calls + b.settings.minPerSecond*b.settings.window.Seconds()
	if retries+1 > allowed {
		return false
	}
	bk.retries++
	return true
}
