package clock

import (
	"context"
	"sync"
	"time"
)

// Fake is a Clock for tests. Its time moves only through Advance, or through
// timers when auto-advance is on. The zero value is not usable; call NewFake.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	auto   bool
	timers []*fakeTimer
	added  chan struct{} // closed and replaced whenever a timer is created
}

// NewFake returns a Fake whose time is now.
func NewFake(now time.Time) *Fake {
	return &Fake{now: now, added: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// SetAutoAdvance makes every new timer fire at once and move the fake time
// forward by its duration, as if the caller had slept exactly that long.
// It suits single-goroutine code such as a retry loop's backoff.
func (f *Fake) SetAutoAdvance(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auto = on
}

// NewTimer returns a timer that fires when the fake time reaches now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, at: f.now.Add(d), c: make(chan time.Time, 1)}
	if f.auto {
		f.now = t.at
	}
	if !t.at.After(f.now) {
		t.c <- f.now
		return t
	}
	f.timers = append(f.timers, t)
	close(f.added)
	f.added = make(chan struct{})
	return t
}

// Advance moves the fake time forward by d and fires every timer that is due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	kept := f.timers[:0]
	for _, t := range f.timers {
		if t.at.After(f.now) {
			kept = append(kept, t)
			continue
		}
		t.c <- f.now
	}
	clear(f.timers[len(kept):])
	f.timers = kept
}

// Timers returns how many timers are waiting to fire.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// WaitForTimers blocks until at least n timers are waiting or ctx is done,
// and reports whether they are. Tests use it to know a goroutine has reached
// its wait before they Advance.
func (f *Fake) WaitForTimers(ctx context.Context, n int) bool {
	for {
		f.mu.Lock()
		got, added := len(f.timers), f.added
		f.mu.Unlock()
		if got >= n {
			return true
		}
		select {
		case <-added:
		case <-ctx.Done():
			return false
		}
	}
}

type fakeTimer struct {
	f  *Fake
	at time.Time
	c  chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	for i, x := range t.f.timers {
		if x == t {
			t.f.timers = append(t.f.timers[:i], t.f.timers[i+1:]...)
			return true
		}
	}
	return false
}
