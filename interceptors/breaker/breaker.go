package breaker

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// State is the state of a Breaker.
type State int

// States, numbered as in gobreaker.
const (
	StateClosed State = iota
	StateHalfOpen
	StateOpen
)

// String returns "closed", "half-open" or "open".
func (s State) String() string {
	switch s {
	case StateClosed:
		return "closed"
	case StateHalfOpen:
		return "half-open"
	case StateOpen:
		return "open"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// The two sentinel errors of Allow, as in gobreaker.
var (
	// ErrOpenState: the circuit is open.
	ErrOpenState = errors.New("breaker: circuit open")
	// ErrTooManyRequests: the circuit is half-open and every probe slot is
	// taken.
	ErrTooManyRequests = errors.New("breaker: too many half-open probes")
)

// Counts are the calls of the current closed-state window. Consecutive
// counts run across bucket boundaries, but two failures further apart than
// the window do not count as consecutive. Its JSON names are lowerCamel,
// as in the rest of the admin API that shows them.
type Counts struct {
	Requests             int `json:"requests"`
	TotalSuccesses       int `json:"totalSuccesses"`
	TotalFailures        int `json:"totalFailures"`
	TotalExclusions      int `json:"totalExclusions"`
	ConsecutiveSuccesses int `json:"consecutiveSuccesses"`
	ConsecutiveFailures  int `json:"consecutiveFailures"`
}

// Breaker is a circuit breaker: closed, open for a cool-down after too many
// failures, then half-open with a bounded number of probes. It is safe for
// concurrent use; one mutex guards the state, held for a few comparisons per
// call.
type Breaker struct {
	s Settings

	mu         sync.Mutex
	state      State
	generation uint64    // bumped on every transition; stale results are dropped
	openUntil  time.Time // end of the cool-down while open
	probes     int       // half-open probes admitted and not excluded
	consecOK   int
	consecFail int
	lastFail   time.Time // consecutive failures further apart than Window do not add up
	start      time.Time // start of the current generation
	buckets    []bucket
	trip       Trip // the last time the breaker left closed
}

// Trip is the last time a breaker opened from closed: when, the counts of
// the closed window that tripped it, and when it last opened since (a
// half-open probe that failed opens it again). Counts restart at zero in
// every state, so while an upstream stays down the open and half-open
// breaker's own Counts are zeros; the trip keeps what explains it. Its
// zero value: the breaker never opened.
type Trip struct {
	At         time.Time `json:"at"`
	Counts     Counts    `json:"counts"`
	LastOpened time.Time `json:"lastOpened"`
}

type bucket struct {
	epoch                      int64
	requests, ok, failed, excl int
}

// New returns a closed Breaker, or the error of s.Validate.
func New(s Settings) (*Breaker, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s = s.withDefaults()
	b := &Breaker{s: s, buckets: make([]bucket, int(s.Window/s.BucketPeriod))}
	b.start = time.Now()
	return b, nil
}

// Name returns Settings.Name.
func (b *Breaker) Name() string { return b.s.Name }

// State returns the current state.
func (b *Breaker) State() State {
	b.mu.Lock()
	st, tr := b.current(time.Now())
	b.mu.Unlock()
	b.notify(tr)
	return st
}

// Counts returns the counts of the current window.
func (b *Breaker) Counts() Counts {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts(b.epoch(time.Now()))
}

// LastTrip returns the last time the breaker opened from closed, and
// false if it never has.
func (b *Breaker) LastTrip() (Trip, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.trip, !b.trip.At.IsZero()
}

// Ticket is an admitted call; hand it back to Done.
type Ticket struct {
	generation uint64
	start      time.Time
}

// Allow admits a call or returns ErrOpenState or ErrTooManyRequests. done
// must be called exactly once with the call's error; it classifies it with
// Settings.IsExcluded and IsSuccessful and the slow-call threshold.
func (b *Breaker) Allow() (done func(err error), err error) {
	t, err := b.Admit()
	if err != nil {
		return nil, err
	}
	return func(err error) { b.Done(t, b.outcome(err)) }, nil
}

func (b *Breaker) outcome(err error) Outcome {
	switch {
	case b.s.IsExcluded(err):
		return Excluded
	case b.s.IsSuccessful(err):
		return Success
	}
	return Failure
}

// Admit is Allow without the closure: the interceptor's allocation-free path.
func (b *Breaker) Admit() (Ticket, error) { return b.admit(time.Now()) }

// Record counts a call that ran without Admit, started at start: one whose
// breaker could be chosen only after it ran, such as an instance's breaker
// picked by the address the call went to. It is admitted and done at once;
// while open, or half-open with every probe slot taken, it is dropped (it
// was under way before the breaker could refuse it).
func (b *Breaker) Record(start time.Time, o Outcome) {
	if t, err := b.admit(time.Now()); err == nil {
		t.start = start
		b.Done(t, o)
	}
}

func (b *Breaker) admit(now time.Time) (Ticket, error) {
	b.mu.Lock()
	st, tr := b.current(now)
	var err error
	switch {
	case st == StateOpen:
		err = ErrOpenState
	case st == StateHalfOpen && b.probes >= b.s.MaxRequests:
		err = ErrTooManyRequests
	case st == StateHalfOpen:
		b.probes++
	default:
		b.bucket(b.epoch(now)).requests++
	}
	gen := b.generation
	b.mu.Unlock()
	b.notify(tr)
	return Ticket{generation: gen, start: now}, err
}

// Done records the outcome of an admitted call. A call slower than
// Settings.SlowCallThreshold is a Failure unless it is Excluded. Results
// from before the last transition are dropped.
func (b *Breaker) Done(t Ticket, o Outcome) {
	now := time.Now()
	if o == Success && b.s.SlowCallThreshold > 0 && now.Sub(t.start) > b.s.SlowCallThreshold {
		o = Failure
	}
	b.mu.Lock()
	st, tr := b.current(now)
	if t.generation == b.generation {
		switch st {
		case StateClosed:
			tr = b.closedDone(now, o)
		case StateHalfOpen:
			tr = b.halfOpenDone(now, o)
		}
	}
	b.mu.Unlock()
	b.notify(tr)
}

func (b *Breaker) closedDone(now time.Time, o Outcome) *transition {
	epoch := b.epoch(now)
	bk := b.bucket(epoch)
	switch o {
	case Excluded:
		bk.excl++
		return nil
	case Success:
		bk.ok++
		b.consecOK++
		b.consecFail = 0
		return nil
	}
	bk.failed++
	if now.Sub(b.lastFail) > b.s.Window {
		b.consecFail = 0
	}
	b.lastFail = now
	b.consecFail++
	b.consecOK = 0
	if b.readyToTrip(b.counts(epoch)) {
		return b.setState(StateOpen, now)
	}
	return nil
}

func (b *Breaker) readyToTrip(c Counts) bool {
	if b.s.ReadyToTrip != nil {
		return b.s.ReadyToTrip(c)
	}
	if n := b.s.ConsecutiveFailures; n > 0 && c.ConsecutiveFailures >= n {
		return true
	}
	decided := c.TotalSuccesses + c.TotalFailures
	return b.s.FailureRate > 0 && decided >= b.s.MinCalls &&
		float64(c.TotalFailures) >= b.s.FailureRate*float64(decided)
}

func (b *Breaker) halfOpenDone(now time.Time, o Outcome) *transition {
	switch o {
	case Excluded:
		b.probes-- // the slot goes to the next caller
		return nil
	case Failure:
		return b.setState(StateOpen, now)
	}
	b.consecOK++
	if b.consecOK >= b.s.MaxRequests {
		return b.setState(StateClosed, now)
	}
	return nil
}

// RetryAfter returns how long callers should wait before trying again: the
// rest of the cool-down while open, the cool-down while half-open with every
// probe slot taken, zero otherwise.
func (b *Breaker) RetryAfter() time.Duration {
	now := time.Now()
	b.mu.Lock()
	st, tr := b.current(now)
	var d time.Duration
	switch {
	case st == StateOpen:
		d = b.openUntil.Sub(now)
	case st == StateHalfOpen && b.probes >= b.s.MaxRequests:
		d = b.s.CoolDown
	}
	b.mu.Unlock()
	b.notify(tr)
	return d
}

// current moves an open breaker whose cool-down has ended to half-open and
// returns the state. b.mu must be held.
func (b *Breaker) current(now time.Time) (State, *transition) {
	if b.state == StateOpen && !now.Before(b.openUntil) {
		return StateHalfOpen, b.setState(StateHalfOpen, now)
	}
	return b.state, nil
}

type transition struct {
	from, to State
}

// setState starts a new generation in state to. b.mu must be held; the
// returned transition is announced by notify once it is released.
func (b *Breaker) setState(to State, now time.Time) *transition {
	from := b.state
	if to == StateOpen {
		if from == StateClosed {
			b.trip = Trip{At: now, Counts: b.counts(b.epoch(now))}
		}
		b.trip.LastOpened = now
	}
	b.state = to
	b.generation++
	b.start = now
	b.probes, b.consecOK, b.consecFail = 0, 0, 0
	clear(b.buckets)
	if to == StateOpen {
		b.openUntil = now.Add(b.s.CoolDown)
	}
	return &transition{from, to}
}

func (b *Breaker) notify(tr *transition) {
	if tr != nil && b.s.OnStateChange != nil {
		b.s.OnStateChange(b.s.Name, tr.from, tr.to)
	}
}

// epoch numbers bucket periods since the generation started, offset so no
// live epoch is zero (the zero bucket value).
func (b *Breaker) epoch(now time.Time) int64 {
	return max(int64(now.Sub(b.start)/b.s.BucketPeriod), 0) + int64(len(b.buckets))
}

// bucket returns the bucket of epoch, emptied if it held an older one.
func (b *Breaker) bucket(epoch int64) *bucket {
	bk := &b.buckets[epoch%int64(len(b.buckets))]
	if bk.epoch != epoch {
		*bk = bucket{epoch: epoch}
	}
	return bk
}

// counts sums the buckets of the window ending at epoch.
func (b *Breaker) counts(epoch int64) Counts {
	c := Counts{ConsecutiveSuccesses: b.consecOK, ConsecutiveFailures: b.consecFail}
	for i := range b.buckets {
		if bk := &b.buckets[i]; bk.epoch > epoch-int64(len(b.buckets)) && bk.epoch <= epoch {
			c.Requests += bk.requests
			c.TotalSuccesses += bk.ok
			c.TotalFailures += bk.failed
			c.TotalExclusions += bk.excl
		}
	}
	return c
}
