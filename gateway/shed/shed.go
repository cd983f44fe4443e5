package shed

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// ErrOverloaded is Acquire's answer when no slot is free and none freed
// within the wait, or the queue of waiters is full.
var ErrOverloaded = errors.New("shed: overloaded")

// Limiter caps concurrent holders of a slot. Build one with New.
type Limiter struct {
	max     int64
	queue   int64
	held    atomic.Int64
	waiting atomic.Int64
	// freed wakes one waiter per released slot when waiters exist; it is
	// buffered to queue so that Release never blocks.
	freed chan struct{}
}

// New returns a Limiter of slots slots (at least 1) and a queue of up to
// queue waiters (0 or less: nobody waits).
func New(slots, queue int) (*Limiter, error) {
	if slots < 1 {
		return nil, errors.New("shed: slots must be at least 1")
	}
	queue = max(queue, 0)
	return &Limiter{max: int64(slots), queue: int64(queue), freed: make(chan struct{}, queue)}, nil
}

// Max returns the number of slots.
func (l *Limiter) Max() int { return int(l.max) }

// InFlight returns the number of slots held now.
func (l *Limiter) InFlight() int { return int(l.held.Load()) }

// Waiting returns the number of callers waiting for a slot now.
func (l *Limiter) Waiting() int { return int(l.waiting.Load()) }

// TryAcquire takes a free slot and reports whether it did; it never waits.
func (l *Limiter) TryAcquire() bool {
	if l.held.Add(1) <= l.max {
		return true
	}
	l.held.Add(-1)
	return false
}

// Acquire takes a slot. When none is free it waits up to wait for one,
// if the queue has room and wait is positive, and never past ctx. It
// returns nil with a slot, ErrOverloaded without one, or ctx's error when
// ctx ended while it waited.
func (l *Limiter) Acquire(ctx context.Context, wait time.Duration) error {
	if l.TryAcquire() {
		return nil
	}
	if wait <= 0 || l.queue == 0 {
		return ErrOverloaded
	}
	if l.waiting.Add(1) > l.queue {
		l.waiting.Add(-1)
		return ErrOverloaded
	}
	defer l.waiting.Add(-1)
	// A slot may have been released between TryAcquire and the count above,
	// with nobody yet counted as waiting to be woken: look again.
	if l.TryAcquire() {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-l.freed:
			if l.TryAcquire() {
				return nil
			}
		case <-t.C:
			return ErrOverloaded
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Release gives back a slot taken by TryAcquire or Acquire.
func (l *Limiter) Release() {
	l.held.Add(-1)
	if l.waiting.Load() > 0 {
		select {
		case l.freed <- struct{}{}:
		default: // as many wake-ups pending as waiters can take
		}
	}
}
