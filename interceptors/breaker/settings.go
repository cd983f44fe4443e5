package breaker

import (
	"cmp"
	"errors"
	"fmt"
	"time"
)

// Defaults: two consecutive failures open the circuit for 800ms, long
// enough to shed a burst aimed at a dead upstream, short enough that a
// recovered one is back within a second.
const (
	DefaultConsecutiveFailures = 2
	DefaultCoolDown            = 800 * time.Millisecond
	DefaultMaxRequests         = 1
	DefaultFailureRate         = 0.5
	DefaultMinCalls            = 20
	DefaultWindow              = 10 * time.Second
	DefaultBucketPeriod        = time.Second
)

// Settings configures one Breaker. The zero value works: every field's
// comment says what zero means.
type Settings struct {
	// Name identifies the breaker in OnStateChange and errors, e.g.
	// "inventory" or "inventory/portico.inventory.v1.InventoryService/GetItem".
	Name string
	// MaxRequests is how many probes the half-open state admits at once,
	// and how many consecutive probe successes close the circuit (as in
	// gobreaker). Zero means 1.
	MaxRequests int
	// ConsecutiveFailures opens the circuit after this many failures in a
	// row in the closed state, each within Window of the one before. Zero
	// means 2; negative turns the rule off.
	ConsecutiveFailures int
	// FailureRate opens the circuit when, over Window, failures/calls reaches
	// it and at least MinCalls calls finished. Zero means 0.5; negative
	// turns the rule off. Must be at most 1.
	FailureRate float64
	// MinCalls is the smallest number of calls in Window the failure rate
	// is judged on. Zero means 20.
	MinCalls int
	// Window is the rolling window of the failure rate. Zero means 10s.
	Window time.Duration
	// BucketPeriod is the step the window rolls by: Window is cut into
	// Window/BucketPeriod buckets (at most 60). Zero means 1s, or Window when
	// Window is shorter.
	BucketPeriod time.Duration
	// SlowCallThreshold makes a call that takes longer a failure, whatever
	// it returned. Zero or negative means calls are never failed for time.
	SlowCallThreshold time.Duration
	// CoolDown is how long the circuit stays open before it lets probes
	// through (gobreaker's Timeout). Zero means 800ms.
	CoolDown time.Duration
	// ReadyToTrip, when set, replaces the ConsecutiveFailures and
	// FailureRate rules: it is called after each failure in the closed state
	// with the counts of the window.
	ReadyToTrip func(Counts) bool
	// IsSuccessful and IsExcluded classify a call's error, as in gobreaker:
	// excluded errors count neither way. nil means Classify.
	IsSuccessful func(err error) bool
	IsExcluded   func(err error) bool
	// OnStateChange is called after every transition, outside the breaker's
	// lock; calls for different transitions may run concurrently.
	OnStateChange func(name string, from, to State)
}

// Validate reports the first field that makes no sense.
func (s Settings) Validate() error {
	switch {
	case s.MaxRequests < 0:
		return errors.New("breaker: MaxRequests must not be negative")
	case s.FailureRate > 1:
		return fmt.Errorf("breaker: FailureRate %v must be at most 1", s.FailureRate)
	case s.MinCalls < 0:
		return errors.New("breaker: MinCalls must not be negative")
	case s.Window < 0:
		return errors.New("breaker: Window must not be negative")
	case s.BucketPeriod < 0:
		return errors.New("breaker: BucketPeriod must not be negative")
	case s.CoolDown < 0:
		return errors.New("breaker: CoolDown must not be negative")
	case s.ConsecutiveFailures < 0 && s.FailureRate < 0 && s.ReadyToTrip == nil:
		return errors.New("breaker: ConsecutiveFailures and FailureRate are both off; the circuit could never open")
	}
	return nil
}

// withDefaults returns s with every zero field replaced by its default.
func (s Settings) withDefaults() Settings {
	s.MaxRequests = cmp.Or(s.MaxRequests, DefaultMaxRequests)
	s.ConsecutiveFailures = cmp.Or(s.ConsecutiveFailures, DefaultConsecutiveFailures)
	s.FailureRate = cmp.Or(s.FailureRate, DefaultFailureRate)
	s.MinCalls = cmp.Or(s.MinCalls, DefaultMinCalls)
	s.Window = cmp.Or(s.Window, DefaultWindow)
	s.BucketPeriod = min(cmp.Or(s.BucketPeriod, DefaultBucketPeriod), s.Window)
	s.BucketPeriod = max(s.BucketPeriod, s.Window/maxBuckets)
	s.CoolDown = cmp.Or(s.CoolDown, DefaultCoolDown)
	if s.IsSuccessful == nil {
		s.IsSuccessful = func(err error) bool { return Classify(err) == Success }
	}
	if s.IsExcluded == nil {
		s.IsExcluded = func(err error) bool { return Classify(err) == Excluded }
	}
	return s
}

const maxBuckets = 60
