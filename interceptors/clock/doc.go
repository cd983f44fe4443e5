// Package clock is the time source of the interceptors: Real for production
// and Fake for tests that move time by hand instead of sleeping.
//
// Every interceptor that reads the time or waits (breaker cool-downs, retry
// backoff, bulkhead queue waits, injected fault delays, deadline budgets)
// takes a Clock through its WithClock option. Nothing else in the package
// tree calls time.Now or time.NewTimer directly, so a test can drive a state
// machine through hours of cool-downs in microseconds.
//
// Real is stateless and safe for concurrent use. Fake is safe for concurrent
// use; its timers fire only when Advance moves its time past their deadline,
// or at once when auto-advance is on (see Fake.SetAutoAdvance).
package clock
