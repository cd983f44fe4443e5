package breaker_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

var (
	unavailable = status.Error(codes.Unavailable, "down")
	notFound    = status.Error(codes.NotFound, "no such order")
)

type transition struct{ from, to breaker.State }

// newBreaker returns a breaker and the transitions it made. Tests that move
// time run in a synctest bubble and move it with time.Sleep.
func newBreaker(t *testing.T, s breaker.Settings) (*breaker.Breaker, *[]transition) {
	t.Helper()
	var trs []transition
	s.OnStateChange = func(_ string, from, to breaker.State) { trs = append(trs, transition{from, to}) }
	b, err := breaker.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return b, &trs
}

func call(t *testing.T, b *breaker.Breaker, err error) error {
	t.Helper()
	done, aerr := b.Allow()
	if aerr != nil {
		return aerr
	}
	done(err)
	return nil
}

func TestOpensAfterConsecutiveFailuresAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, trs := newBreaker(t, breaker.Settings{}) // the defaults: 2 failures, 800ms
		for i := range 2 {
			if err := call(t, b, unavailable); err != nil {
				t.Fatalf("call %d refused: %v", i+1, err)
			}
		}
		if got := b.State(); got != breaker.StateOpen {
			t.Fatalf("State() after 2 failures = %v, want open", got)
		}
		if err := call(t, b, nil); !errors.Is(err, breaker.ErrOpenState) {
			t.Fatalf("Allow() while open = %v, want ErrOpenState", err)
		}
		if got := b.RetryAfter(); got != 800*time.Millisecond {
			t.Errorf("RetryAfter() just after opening = %v, want 800ms", got)
		}
		time.Sleep(799 * time.Millisecond)
		if got := b.State(); got != breaker.StateOpen {
			t.Fatalf("State() 1ms before the cool-down ends = %v, want open", got)
		}
		time.Sleep(time.Millisecond)
		if got := b.State(); got != breaker.StateHalfOpen {
			t.Fatalf("State() after the cool-down = %v, want half-open", got)
		}
		if err := call(t, b, nil); err != nil {
			t.Fatalf("probe refused: %v", err)
		}
		if got := b.State(); got != breaker.StateClosed {
			t.Fatalf("State() after a good probe = %v, want closed", got)
		}
		want := []transition{
			{breaker.StateClosed, breaker.StateOpen},
			{breaker.StateOpen, breaker.StateHalfOpen},
			{breaker.StateHalfOpen, breaker.StateClosed},
		}
		if len(*trs) != len(want) {
			t.Fatalf("transitions = %v, want %v", *trs, want)
		}
		for i := range want {
			if (*trs)[i] != want[i] {
				t.Errorf("transition %d = %v, want %v", i, (*trs)[i], want[i])
			}
		}
	})
}

func TestSuccessResetsConsecutiveFailures(t *testing.T) {
	b, _ := newBreaker(t, breaker.Settings{FailureRate: -1})
	for _, err := range []error{unavailable, nil, unavailable, nil, unavailable} {
		_ = call(t, b, err)
	}
	if got := b.State(); got != breaker.StateClosed {
		t.Errorf("State() after alternating failures = %v, want closed", got)
	}
}

func TestFailuresFurtherApartThanTheWindowAreNotConsecutive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, breaker.Settings{Window: 10 * time.Second})
		_ = call(t, b, unavailable)
		time.Sleep(11 * time.Second)
		_ = call(t, b, unavailable)
		if got := b.State(); got != breaker.StateClosed {
			t.Errorf("State() after two failures 11s apart = %v, want closed", got)
		}
	})
}

func TestHalfOpenBoundsProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, breaker.Settings{MaxRequests: 2})
		_ = call(t, b, unavailable)
		_ = call(t, b, unavailable)
		time.Sleep(breaker.DefaultCoolDown)

		// Two probes in flight at once are admitted; a third is not.
		done1, err1 := b.Allow()
		done2, err2 := b.Allow()
		if err1 != nil || err2 != nil {
			t.Fatalf("first two probes: %v, %v; want both admitted", err1, err2)
		}
		if _, err := b.Allow(); !errors.Is(err, breaker.ErrTooManyRequests) {
			t.Fatalf("third concurrent probe: %v, want ErrTooManyRequests", err)
		}
		done1(nil)
		if got := b.State(); got != breaker.StateHalfOpen {
			t.Fatalf("State() after 1 of 2 good probes = %v, want half-open", got)
		}
		if _, err := b.Allow(); !errors.Is(err, breaker.ErrTooManyRequests) {
			t.Fatalf("probe while the second is in flight: %v, want ErrTooManyRequests", err)
		}
		done2(nil)
		if got := b.State(); got != breaker.StateClosed {
			t.Errorf("State() after 2 good probes = %v, want closed", got)
		}
	})
}

func TestHalfOpenFailureReopens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, breaker.Settings{})
		_ = call(t, b, unavailable)
		_ = call(t, b, unavailable)
		time.Sleep(breaker.DefaultCoolDown)
		_ = call(t, b, unavailable)
		if got := b.State(); got != breaker.StateOpen {
			t.Fatalf("State() after a failed probe = %v, want open", got)
		}
		if got := b.RetryAfter(); got != breaker.DefaultCoolDown {
			t.Errorf("RetryAfter() = %v, want a fresh cool-down %v", got, breaker.DefaultCoolDown)
		}
	})
}

func TestExcludedProbeFreesItsSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, breaker.Settings{})
		_ = call(t, b, unavailable)
		_ = call(t, b, unavailable)
		time.Sleep(breaker.DefaultCoolDown)
		_ = call(t, b, notFound) // says nothing about health
		if err := call(t, b, nil); err != nil {
			t.Fatalf("probe after an excluded one: %v, want admitted", err)
		}
		if got := b.State(); got != breaker.StateClosed {
			t.Errorf("State() = %v, want closed", got)
		}
	})
}

func TestClassify(t *testing.T) {
	tests := []struct {
		code codes.Code
		want breaker.Outcome
	}{
		{codes.Unavailable, breaker.Failure},
		{codes.DeadlineExceeded, breaker.Failure},
		{codes.Internal, breaker.Failure},
		{codes.Unknown, breaker.Failure},
		{codes.DataLoss, breaker.Failure},
		{codes.InvalidArgument, breaker.Excluded},
		{codes.NotFound, breaker.Excluded},
		{codes.FailedPrecondition, breaker.Excluded},
		{codes.PermissionDenied, breaker.Excluded},
		{codes.AlreadyExists, breaker.Excluded},
		{codes.Canceled, breaker.Excluded},
		{codes.Unauthenticated, breaker.Excluded},
		{codes.ResourceExhausted, breaker.Excluded},
	}
	for _, tt := range tests {
		if got := breaker.Classify(status.Error(tt.code, "x")); got != tt.want {
			t.Errorf("Classify(%v) = %v, want %v", tt.code, got, tt.want)
		}
	}
	for name, tt := range map[string]struct {
		err  error
		want breaker.Outcome
	}{
		"live upstream's deliberate UNAVAILABLE": {rpcerr.New(codes.Unavailable, "order.portico.dev", "INVENTORY_UNAVAILABLE", "x"), breaker.Excluded},
		"deeper hop's CIRCUIT_OPEN":              {rpcerr.New(codes.Unavailable, reason.Domain, reason.CircuitOpen, "x"), breaker.Excluded},
		"injected UNAVAILABLE counts":            {rpcerr.New(codes.Unavailable, reason.Domain, reason.FaultInjected, "x"), breaker.Failure},
	} {
		if got := breaker.Classify(tt.err); got != tt.want {
			t.Errorf("%s: Classify = %v, want %v", name, got, tt.want)
		}
	}
	if got := breaker.Classify(nil); got != breaker.Success {
		t.Errorf("Classify(nil) = %v, want Success", got)
	}
}

func TestExcludedErrorsNeverTrip(t *testing.T) {
	b, _ := newBreaker(t, breaker.Settings{})
	for range 10 {
		_ = call(t, b, notFound)
	}
	if got := b.State(); got != breaker.StateClosed {
		t.Errorf("State() after 10 NOT_FOUND = %v, want closed", got)
	}
	if got := b.Counts(); got.TotalExclusions != 10 || got.TotalFailures != 0 {
		t.Errorf("Counts() = %+v, want 10 exclusions and no failures", got)
	}
}

func TestSlowCallsAreFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, breaker.Settings{SlowCallThreshold: 100 * time.Millisecond})
		for range 2 {
			done, err := b.Allow()
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(150 * time.Millisecond) // the call took 150ms and succeeded
			done(nil)
		}
		if got := b.State(); got != breaker.StateOpen {
			t.Errorf("State() after 2 slow successes = %v, want open", got)
		}
	})
}

func TestFailureRateOverTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, breaker.Settings{
			ConsecutiveFailures: -1, FailureRate: 0.5, MinCalls: 10,
			Window: 10 * time.Second, BucketPeriod: time.Second,
		})
		// 4 failures and 5 successes, interleaved: 9 calls, below MinCalls.
		for i := range 9 {
			if i%2 == 0 {
				_ = call(t, b, nil)
			} else {
				_ = call(t, b, unavailable)
			}
			time.Sleep(500 * time.Millisecond)
		}
		if got := b.State(); got != breaker.StateClosed {
			t.Fatalf("State() below MinCalls = %v, want closed", got)
		}
		_ = call(t, b, unavailable) // 10 calls, 5 failures: rate 0.5
		if got := b.State(); got != breaker.StateOpen {
			t.Fatalf("State() at a 0.5 failure rate = %v, want open", got)
		}
	})
}

func TestOldBucketsLeaveTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, breaker.Settings{
			ConsecutiveFailures: -1, FailureRate: 0.5, MinCalls: 4,
			Window: 4 * time.Second, BucketPeriod: time.Second,
		})
		_ = call(t, b, unavailable)
		_ = call(t, b, unavailable)
		_ = call(t, b, unavailable)
		time.Sleep(5 * time.Second) // those three are out of the window
		_ = call(t, b, nil)
		_ = call(t, b, nil)
		_ = call(t, b, nil)
		_ = call(t, b, unavailable)
		if got := b.State(); got != breaker.StateClosed {
			t.Errorf("State() = %v, want closed: only 1 of 4 calls in the window failed", got)
		}
	})
}

func TestResultsFromAnOldGenerationAreDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, breaker.Settings{})
		slow, err := b.Allow() // admitted while closed
		if err != nil {
			t.Fatal(err)
		}
		_ = call(t, b, unavailable)
		_ = call(t, b, unavailable) // opens
		time.Sleep(breaker.DefaultCoolDown)
		probe, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		slow(unavailable) // from the closed generation: must not reopen
		if got := b.State(); got != breaker.StateHalfOpen {
			t.Fatalf("State() after a stale failure = %v, want half-open", got)
		}
		probe(nil)
		if got := b.State(); got != breaker.StateClosed {
			t.Errorf("State() = %v, want closed", got)
		}
	})
}

func TestSettingsValidate(t *testing.T) {
	tests := []struct {
		name string
		s    breaker.Settings
	}{
		{"negative MaxRequests", breaker.Settings{MaxRequests: -1}},
		{"FailureRate above 1", breaker.Settings{FailureRate: 1.5}},
		{"negative CoolDown", breaker.Settings{CoolDown: -time.Second}},
		{"both rules off", breaker.Settings{ConsecutiveFailures: -1, FailureRate: -1}},
	}
	for _, tt := range tests {
		if _, err := breaker.New(tt.s); err == nil {
			t.Errorf("New(%s) = nil error, want one", tt.name)
		}
	}
	if _, err := breaker.New(breaker.Settings{}); err != nil {
		t.Errorf("New(zero Settings) = %v, want the defaults to work", err)
	}
}

// TestLastTrip: a breaker that left closed keeps when and the closed
// window's counts, through half-open (whose own counts are zeros) and a
// failed probe (which only moves LastOpened); one that never opened has
// none.
func TestLastTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBreaker(t, breaker.Settings{})
		if _, ok := b.LastTrip(); ok {
			t.Fatal("LastTrip() of a new breaker reports a trip")
		}
		_ = call(t, b, nil)
		_ = call(t, b, unavailable)
		_ = call(t, b, unavailable)
		tripped := time.Now()
		want := breaker.Trip{At: tripped, LastOpened: tripped, Counts: breaker.Counts{Requests: 3, TotalSuccesses: 1, TotalFailures: 2, ConsecutiveFailures: 2}}
		time.Sleep(breaker.DefaultCoolDown)
		if got := b.State(); got != breaker.StateHalfOpen || b.Counts() != (breaker.Counts{}) {
			t.Fatalf("after the cool-down: %v %+v, want half-open with zero counts", got, b.Counts())
		}
		if got, ok := b.LastTrip(); !ok || got != want {
			t.Errorf("LastTrip() half-open = %+v %v, want %+v", got, ok, want)
		}
		_ = call(t, b, unavailable)
		want.LastOpened = time.Now()
		if got, _ := b.LastTrip(); got != want || !want.LastOpened.After(tripped) {
			t.Errorf("LastTrip() after a failed probe = %+v, want %+v", got, want)
		}
	})
}
