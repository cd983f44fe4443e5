package interceptors

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/portico-gateway/portico/interceptors/balance"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/bulkhead"
	"github.com/portico-gateway/portico/interceptors/retry"
)

// DefaultTimeout bounds a call from one service to another (all attempts
// together) when Config.Timeout is zero; `portico order --upstream-timeout`
// defaults to it. The REST edge applies its own route deadline instead
// (config.UpstreamConfig.Timeout) and runs the chain with NoTimeout.
const DefaultTimeout = time.Second

// NoTimeout, as Config.Timeout, gives the chain no timeout of its own: the
// caller's deadline alone bounds each call.
const NoTimeout time.Duration = -1

// Config is one upstream's resilience settings, shaped for YAML (durations
// as "240ms"). One rule holds for every field: zero (or absent) means the
// default its comment names. A feature that is on by default is turned off
// by a negative value; a feature that is off by default (AttemptTimeout,
// SlowCallThreshold) is turned on by a positive one, and a negative value
// is an error. Health checking, a switch, is HealthCheck.Enabled: true,
// false, or absent for the default. Defaults returns every default spelled
// out; each value is documented once, by the constant it comes from.
type Config struct {
	// Name names the upstream in errors ("upstream", "hop"), metrics and
	// logs, e.g. "inventory". Empty means Target.
	Name string `yaml:"name,omitempty"`
	// Target is a gRPC target: "dns:///inventory:43101" or
	// "127.0.0.1:43101". Exactly one of Target and Addresses must be set.
	// A dns:/// target is resolved by Portico's resolver, re-resolved every
	// DNSRefresh, and its instances balanced and ejected like Addresses.
	Target string `yaml:"target,omitempty"`
	// DNSRefresh is how often a dns:/// Target is re-resolved, so instances
	// added behind the name are used without a restart. Zero means
	// balance.DefaultDNSRefresh; negative leaves the name to grpc-go's own dns resolver (re-resolved
	// only after a connection fails, no ejection).
	DNSRefresh time.Duration `yaml:"dns_refresh,omitempty"`
	// Addresses are the upstream's instances ("10.0.0.7:43101"), served by
	// a resolver that Upstream.SetAddresses updates and that ejects failing
	// instances (see Ejection). Requires Name.
	Addresses []string `yaml:"addresses,omitempty"`
	// Timeout bounds each call (all attempts together) unless the caller's
	// deadline is sooner. Zero means DefaultTimeout; negative (NoTimeout)
	// means none of its own: the caller's deadline alone applies.
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// MethodTimeouts replace Timeout for full method names
	// ("/portico.order.v1.OrderService/CreateOrder"). Values must be
	// positive.
	MethodTimeouts map[string]time.Duration `yaml:"method_timeouts,omitempty"`
	// MinBudget fails a call locally (DEADLINE_BUDGET_EXHAUSTED) when the
	// caller has less time left. Zero means only calls whose deadline has
	// passed; negative is an error. At the edge it must be shorter than
	// the upstream's timeout, or every call would fail.
	MinBudget time.Duration `yaml:"min_budget,omitempty"`
	// Retry configures retries of idempotent calls.
	Retry RetryConfig `yaml:"retry,omitempty"`
	// Breaker configures the circuit breakers: the upstream's, each
	// method's and, for Addresses or a dns:/// Target, each instance's
	// (which opens for that instance alone; see package interceptors).
	Breaker BreakerConfig `yaml:"breaker,omitempty"`
	// Bulkhead caps the calls in flight.
	Bulkhead BulkheadConfig `yaml:"bulkhead,omitempty"`
	// Balancer is "round_robin" or "least_request". Empty means
	// round_robin (balance.RoundRobin).
	Balancer string `yaml:"balancer,omitempty"`
	// HealthCheck turns on grpc.health.v1 client health checking.
	HealthCheck HealthCheckConfig `yaml:"health_check,omitempty"`
	// Ejection configures passive ejection of failing Addresses.
	Ejection EjectionConfig `yaml:"ejection,omitempty"`
}

// RetryConfig configures package retry.
type RetryConfig struct {
	// MaxAttempts counts attempts in total, the first included: 1 means
	// no retries. Zero means retry.DefaultMaxAttempts; negative is an error.
	MaxAttempts int `yaml:"max_attempts,omitempty"`
	// InitialBackoff and MaxBackoff bound the jittered exponential backoff
	// (gRFC A6). Zero means retry.DefaultInitialBackoff and
	// retry.DefaultMaxBackoff; negative is an error.
	InitialBackoff time.Duration `yaml:"initial_backoff,omitempty"`
	MaxBackoff     time.Duration `yaml:"max_backoff,omitempty"`
	// AttemptTimeout bounds each attempt inside Timeout; an attempt that
	// runs out is retried. Zero means the default, off: attempts are
	// bounded by the call's deadline only. Negative is an error.
	AttemptTimeout time.Duration `yaml:"attempt_timeout,omitempty"`
	// BudgetRatio is the share of calls over BudgetWindow that may be
	// retries. Zero means retry.DefaultBudgetRatio; it must be at most 1.
	BudgetRatio float64 `yaml:"budget_ratio,omitempty"`
	// BudgetWindow is the budget's sliding window. Zero means
	// retry.DefaultBudgetWindow.
	BudgetWindow time.Duration `yaml:"budget_window,omitempty"`
	// BudgetMinPerSecond is the floor of retries per second of window the
	// budget always allows. Zero means retry.DefaultBudgetMinPerSecond;
	// negative means no floor.
	BudgetMinPerSecond float64 `yaml:"budget_min_per_second,omitempty"`
}

// BreakerConfig configures package breaker. Zero values mean the defaults
// of breaker.Settings.
type BreakerConfig struct {
	// ConsecutiveFailures opens the circuit after this many failures in a
	// row. Zero means breaker.DefaultConsecutiveFailures; -1 turns the
	// rule off (below -1 is an error).
	ConsecutiveFailures int `yaml:"consecutive_failures,omitempty"`
	// FailureRate opens the circuit when failures/calls over Window reach
	// it with at least MinCalls calls. Zero means
	// breaker.DefaultFailureRate; negative turns the rule off.
	FailureRate float64 `yaml:"failure_rate,omitempty"`
	// MinCalls: zero means breaker.DefaultMinCalls.
	MinCalls int `yaml:"min_calls,omitempty"`
	// Window: zero means breaker.DefaultWindow. BucketPeriod: zero means
	// breaker.DefaultBucketPeriod.
	Window       time.Duration `yaml:"window,omitempty"`
	BucketPeriod time.Duration `yaml:"bucket_period,omitempty"`
	// SlowCallThreshold makes slower calls failures. Zero means the
	// default, off: calls are never failed for time. Negative is an error.
	SlowCallThreshold time.Duration `yaml:"slow_call_threshold,omitempty"`
	// CoolDown is how long the circuit stays open. Zero means
	// breaker.DefaultCoolDown.
	CoolDown time.Duration `yaml:"cool_down,omitempty"`
	// HalfOpenProbes is how many probes the half-open circuit admits at
	// once, and how many successes close it. Zero means
	// breaker.DefaultMaxRequests.
	HalfOpenProbes int `yaml:"half_open_probes,omitempty"`
	// Methods get a breaker of their own (full method names).
	Methods []string `yaml:"methods,omitempty"`
}

// BulkheadConfig configures package bulkhead.
type BulkheadConfig struct {
	// MaxInFlight caps concurrent calls. Zero means bulkhead.DefaultMax; negative is an
	// error.
	MaxInFlight int `yaml:"max_in_flight,omitempty"`
	// Queue is how many calls may wait for a slot. Zero means
	// bulkhead.DefaultQueue; -1 means none (below -1 is an error).
	Queue int `yaml:"queue,omitempty"`
	// MaxWait bounds a queued call's wait. Zero means bulkhead.DefaultMaxWait; negative is an
	// error.
	MaxWait time.Duration `yaml:"max_wait,omitempty"`
}

// HealthCheckConfig configures client health checking.
type HealthCheckConfig struct {
	// Enabled turns it on (true) or off (false); the upstream must serve
	// grpc.health.v1. Absent (nil) means the default, off; the edge's
	// default is on (config.UpstreamConfig.Chain).
	Enabled *bool `yaml:"enabled,omitempty"`
	// Service is the health service name to watch; empty means the whole
	// server.
	Service string `yaml:"service,omitempty"`
}

// On reports whether health checking is on.
func (h HealthCheckConfig) On() bool { return h.Enabled != nil && *h.Enabled }

// EjectionConfig configures passive ejection (package balance). It applies
// to Addresses only.
type EjectionConfig struct {
	// ConsecutiveFailures ejects an address after this many failed calls
	// in a row. Zero means balance.DefaultConsecutiveFailures; -1 turns
	// ejection off (below -1 is an error).
	ConsecutiveFailures int `yaml:"consecutive_failures,omitempty"`
	// BaseTime is the first ejection's length. Zero means
	// balance.DefaultBaseEjectionTime.
	BaseTime time.Duration `yaml:"base_time,omitempty"`
	// MaxTime caps an ejection. Zero means balance.DefaultMaxEjectionTime.
	MaxTime time.Duration `yaml:"max_time,omitempty"`
	// MaxPercent caps the share of addresses ejected at once. Zero means
	// balance.DefaultMaxEjectionPercent.
	MaxPercent int `yaml:"max_percent,omitempty"`
}

// Defaults returns the Config every zero field stands for, spelled out
// from each package's default constants.
func Defaults() Config {
	return Config{
		Timeout: DefaultTimeout,
		Retry: RetryConfig{
			MaxAttempts: retry.DefaultMaxAttempts, InitialBackoff: retry.DefaultInitialBackoff,
			MaxBackoff: retry.DefaultMaxBackoff, BudgetRatio: retry.DefaultBudgetRatio,
			BudgetWindow: retry.DefaultBudgetWindow, BudgetMinPerSecond: retry.DefaultBudgetMinPerSecond,
		},
		Breaker: BreakerConfig{
			ConsecutiveFailures: breaker.DefaultConsecutiveFailures, FailureRate: breaker.DefaultFailureRate,
			MinCalls: breaker.DefaultMinCalls, Window: breaker.DefaultWindow,
			BucketPeriod: breaker.DefaultBucketPeriod, CoolDown: breaker.DefaultCoolDown,
			HalfOpenProbes: breaker.DefaultMaxRequests,
		},
		Bulkhead: BulkheadConfig{MaxInFlight: bulkhead.DefaultMax, Queue: bulkhead.DefaultQueue, MaxWait: bulkhead.DefaultMaxWait},
		Balancer: balance.RoundRobin,
		Ejection: EjectionConfig{
			ConsecutiveFailures: balance.DefaultConsecutiveFailures, BaseTime: balance.DefaultBaseEjectionTime,
			MaxTime: balance.DefaultMaxEjectionTime, MaxPercent: balance.DefaultMaxEjectionPercent,
		},
	}
}

// FieldError is a Config problem, named by the field's YAML path.
type FieldError struct {
	Field string // e.g. "retry.max_attempts"
	Msg   string
}

// Error returns "field: message".
func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Validate reports every problem of c, each a *FieldError, joined.
func (c Config) Validate() error {
	var v validator
	v.check(c.Target != "" || len(c.Addresses) > 0, "target", "give target or addresses")
	v.check(c.Target == "" || len(c.Addresses) == 0, "addresses", "give target or addresses, not both")
	v.check(len(c.Addresses) == 0 || c.Name != "", "name", "required with addresses")
	for i, a := range c.Addresses {
		v.check(a != "", fmt.Sprintf("addresses[%d]", i), "must not be empty")
	}
	v.check(c.DNSRefresh <= 0 || c.DNSRefresh >= balance.MinDNSRefresh, "dns_refresh",
		fmt.Sprintf("must be at least %v (or negative: off), got %v", balance.MinDNSRefresh, c.DNSRefresh))
	for _, m := range slices.Sorted(maps.Keys(c.MethodTimeouts)) {
		d := c.MethodTimeouts[m]
		v.check(strings.HasPrefix(m, "/") && strings.Count(m, "/") == 2, "method_timeouts["+m+"]", "want a full method name /package.Service/Method")
		v.check(d > 0, "method_timeouts["+m+"]", fmt.Sprintf("must be positive, got %v", d))
	}
	v.nonNegative("min_budget", c.MinBudget)
	c.Retry.validate(&v)
	c.Breaker.validate(&v)
	v.check(c.Bulkhead.MaxInFlight >= 0, "bulkhead.max_in_flight", fmt.Sprintf("must not be negative, got %d", c.Bulkhead.MaxInFlight))
	v.nonNegative("bulkhead.max_wait", c.Bulkhead.MaxWait)
	v.offOrCount("bulkhead.queue", c.Bulkhead.Queue, "no queue")
	v.offOrCount("ejection.consecutive_failures", c.Ejection.ConsecutiveFailures, "no ejection")
	if _, err := balance.Policy(c.Balancer); err != nil {
		v.fail("balancer", fmt.Sprintf("unknown policy %q, want round_robin or least_request", c.Balancer))
	}
	v.nonNegative("ejection.base_time", c.Ejection.BaseTime)
	v.nonNegative("ejection.max_time", c.Ejection.MaxTime)
	v.check(c.Ejection.MaxPercent >= 0 && c.Ejection.MaxPercent <= 100, "ejection.max_percent", fmt.Sprintf("must be 0..100, got %d", c.Ejection.MaxPercent))
	return v.err()
}

func (r RetryConfig) validate(v *validator) {
	v.check(r.MaxAttempts >= 0, "retry.max_attempts", fmt.Sprintf("must be at least 1 (0 means 3), got %d", r.MaxAttempts))
	v.nonNegative("retry.initial_backoff", r.InitialBackoff)
	v.nonNegative("retry.max_backoff", r.MaxBackoff)
	v.check(r.AttemptTimeout >= 0, "retry.attempt_timeout", fmt.Sprintf("must not be negative (0, the default, is off), got %v", r.AttemptTimeout))
	v.check(r.BudgetRatio >= 0 && r.BudgetRatio <= 1, "retry.budget_ratio", fmt.Sprintf("must be 0..1, got %v", r.BudgetRatio))
	v.nonNegative("retry.budget_window", r.BudgetWindow)
	v.check(!math.IsNaN(r.BudgetMinPerSecond) && !math.IsInf(r.BudgetMinPerSecond, 0), "retry.budget_min_per_second",
		fmt.Sprintf("must be a finite number (negative: no floor), got %v", r.BudgetMinPerSecond))
}

func (b BreakerConfig) validate(v *validator) {
	v.check(b.FailureRate <= 1, "breaker.failure_rate", fmt.Sprintf("must be at most 1, got %v", b.FailureRate))
	v.offOrCount("breaker.consecutive_failures", b.ConsecutiveFailures, "the rule off")
	v.check(b.ConsecutiveFailures >= 0 || b.FailureRate >= 0, "breaker.consecutive_failures", "both rules off: the circuit could never open")
	v.check(b.MinCalls >= 0, "breaker.min_calls", fmt.Sprintf("must not be negative, got %d", b.MinCalls))
	v.nonNegative("breaker.window", b.Window)
	v.nonNegative("breaker.bucket_period", b.BucketPeriod)
	v.check(b.SlowCallThreshold >= 0, "breaker.slow_call_threshold", fmt.Sprintf("must not be negative (0, the default, is off), got %v", b.SlowCallThreshold))
	v.nonNegative("breaker.cool_down", b.CoolDown)
	v.check(b.HalfOpenProbes >= 0, "breaker.half_open_probes", fmt.Sprintf("must not be negative, got %d", b.HalfOpenProbes))
}

type validator struct{ errs []error }

func (v *validator) fail(field, msg string) { v.errs = append(v.errs, &FieldError{field, msg}) }

func (v *validator) check(ok bool, field, msg string) {
	if !ok {
		v.fail(field, msg)
	}
}

func (v *validator) nonNegative(field string, d time.Duration) {
	v.check(d >= 0, field, fmt.Sprintf("must not be negative, got %v", d))
}

// offOrCount fails a count below -1: -1 turns the feature off (off says
// what -1 means), so any other negative is a typo, not a way to turn it
// off.
func (v *validator) offOrCount(field string, n int, off string) {
	v.check(n >= -1, field, fmt.Sprintf("want 0 (the default), a positive number or -1 (%s), got %d", off, n))
}

func (v *validator) err() error { return errors.Join(v.errs...) }
