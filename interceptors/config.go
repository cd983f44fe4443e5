package interceptors

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/portico-gateway/portico/interceptors/balance"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/bulkhead"
	"github.com/portico-gateway/portico/interceptors/retry"
)

// Defaults of Config: a 240ms upstream timeout, and two consecutive
// failures opening the circuit for 800ms.
const (
	DefaultTimeout = 240 * time.Millisecond
)

// Config is one upstream's resilience settings, shaped for YAML (durations
// as "240ms"). The zero value of every field but Name/Target/Addresses means
// the default its comment gives; Defaults returns them spelled out.
type Config struct {
	// Name names the upstream in errors ("upstream", "hop"), metrics and
	// logs, e.g. "inventory". Empty means Target.
	Name string `yaml:"name"`
	// Target is a gRPC target: "dns:///inventory:43101" or
	// "127.0.0.1:43101". Exactly one of Target and Addresses must be set.
	// A dns:/// target is resolved by Portico's resolver, re-resolved every
	// DNSRefresh, and its instances balanced and ejected like Addresses.
	Target string `yaml:"target"`
	// DNSRefresh is how often a dns:/// Target is re-resolved, so instances
	// added behind the name are used without a restart. Zero means 30s;
	// negative leaves the name to grpc-go's own dns resolver (re-resolved
	// only after a connection fails, no ejection).
	DNSRefresh time.Duration `yaml:"dns_refresh"`
	// Addresses are the upstream's instances ("10.0.0.7:43101"), served by
	// a resolver that Upstream.SetAddresses updates and that ejects failing
	// instances (see Ejection). Requires Name.
	Addresses []string `yaml:"addresses"`
	// Timeout bounds each call (all attempts together) unless the caller's
	// deadline is sooner. Zero means 240ms; negative is an error.
	Timeout time.Duration `yaml:"timeout"`
	// MethodTimeouts replace Timeout for full method names
	// ("/portico.order.v1.OrderService/CreateOrder"). Values must be
	// positive.
	MethodTimeouts map[string]time.Duration `yaml:"method_timeouts"`
	// MinBudget fails a call locally (DEADLINE_BUDGET_EXHAUSTED) when the
	// caller has less time left. Zero means only calls whose deadline has
	// passed; negative is an error.
	MinBudget time.Duration `yaml:"min_budget"`
	// Retry configures retries of idempotent calls.
	Retry RetryConfig `yaml:"retry"`
	// Breaker configures the circuit breaker.
	Breaker BreakerConfig `yaml:"breaker"`
	// Bulkhead caps the calls in flight.
	Bulkhead BulkheadConfig `yaml:"bulkhead"`
	// Balancer is "round_robin" or "least_request". Empty means
	// round_robin.
	Balancer string `yaml:"balancer"`
	// HealthCheck turns on grpc.health.v1 client health checking.
	HealthCheck HealthCheckConfig `yaml:"health_check"`
	// Ejection configures passive ejection of failing Addresses.
	Ejection EjectionConfig `yaml:"ejection"`
}

// RetryConfig configures package retry.
type RetryConfig struct {
	// MaxAttempts counts attempts in total, the first included: 1 means
	// no retries. Zero means 3; negative is an error.
	MaxAttempts int `yaml:"max_attempts"`
	// InitialBackoff and MaxBackoff bound the jittered exponential backoff
	// (gRFC A6). Zero means 25ms and 250ms; negative is an error.
	InitialBackoff time.Duration `yaml:"initial_backoff"`
	MaxBackoff     time.Duration `yaml:"max_backoff"`
	// AttemptTimeout bounds each attempt inside Timeout; an attempt that
	// runs out is retried. Zero means no per-attempt bound.
	AttemptTimeout time.Duration `yaml:"attempt_timeout"`
	// BudgetRatio is the share of calls over BudgetWindow that may be
	// retries. Zero means 0.2; it must be at most 1.
	BudgetRatio float64 `yaml:"budget_ratio"`
	// BudgetWindow is the budget's sliding window. Zero means 10s.
	BudgetWindow time.Duration `yaml:"budget_window"`
	// BudgetMinPerSecond is the floor of retries per second of window the
	// budget always allows. Zero means 3; negative means no floor.
	BudgetMinPerSecond float64 `yaml:"budget_min_per_second"`
}

// BreakerConfig configures package breaker. Zero values mean the defaults
// of breaker.Settings.
type BreakerConfig struct {
	// ConsecutiveFailures opens the circuit after this many failures in a
	// row. Zero means 2; negative turns the rule off.
	ConsecutiveFailures int `yaml:"consecutive_failures"`
	// FailureRate opens the circuit when failures/calls over Window reach
	// it with at least MinCalls calls. Zero means 0.5; negative turns the
	// rule off.
	FailureRate float64 `yaml:"failure_rate"`
	// MinCalls: zero means 20.
	MinCalls int `yaml:"min_calls"`
	// Window: zero means 10s. BucketPeriod: zero means 1s.
	Window       time.Duration `yaml:"window"`
	BucketPeriod time.Duration `yaml:"bucket_period"`
	// SlowCallThreshold makes slower calls failures. Zero means off.
	SlowCallThreshold time.Duration `yaml:"slow_call_threshold"`
	// CoolDown is how long the circuit stays open. Zero means 800ms.
	CoolDown time.Duration `yaml:"cool_down"`
	// HalfOpenProbes is how many probes the half-open circuit admits at
	// once, and how many successes close it. Zero means 1.
	HalfOpenProbes int `yaml:"half_open_probes"`
	// Methods get a breaker of their own (full method names).
	Methods []string `yaml:"methods"`
}

// BulkheadConfig configures package bulkhead.
type BulkheadConfig struct {
	// MaxInFlight caps concurrent calls. Zero means 100; negative is an
	// error.
	MaxInFlight int `yaml:"max_in_flight"`
	// Queue is how many calls may wait for a slot. Zero means 20; negative
	// means none.
	Queue int `yaml:"queue"`
	// MaxWait bounds a queued call's wait. Zero means 50ms; negative is an
	// error.
	MaxWait time.Duration `yaml:"max_wait"`
}

// HealthCheckConfig configures client health checking.
type HealthCheckConfig struct {
	// Enabled turns it on. Off by default: the upstream must serve
	// grpc.health.v1.
	Enabled bool `yaml:"enabled"`
	// Service is the health service name to watch; empty means the whole
	// server.
	Service string `yaml:"service"`
}

// EjectionConfig configures passive ejection (package balance). It applies
// to Addresses only.
type EjectionConfig struct {
	// ConsecutiveFailures ejects an address after this many failed calls
	// in a row. Zero means 5; negative turns ejection off.
	ConsecutiveFailures int `yaml:"consecutive_failures"`
	// BaseTime is the first ejection's length. Zero means 30s.
	BaseTime time.Duration `yaml:"base_time"`
	// MaxTime caps an ejection. Zero means 5m.
	MaxTime time.Duration `yaml:"max_time"`
	// MaxPercent caps the share of addresses ejected at once. Zero means
	// 50.
	MaxPercent int `yaml:"max_percent"`
}

// Defaults returns the Config every zero field stands for, spelled out:
// a 240ms timeout and a breaker opening after 2 consecutive failures for
// 800ms, with the packages' other defaults.
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
	v.nonNegative("timeout", c.Timeout)
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
	v.nonNegative("retry.attempt_timeout", r.AttemptTimeout)
	v.check(r.BudgetRatio >= 0 && r.BudgetRatio <= 1, "retry.budget_ratio", fmt.Sprintf("must be 0..1, got %v", r.BudgetRatio))
	v.nonNegative("retry.budget_window", r.BudgetWindow)
}

func (b BreakerConfig) validate(v *validator) {
	v.check(b.FailureRate <= 1, "breaker.failure_rate", fmt.Sprintf("must be at most 1, got %v", b.FailureRate))
	v.check(b.ConsecutiveFailures >= 0 || b.FailureRate >= 0, "breaker.consecutive_failures", "both rules off: the circuit could never open")
	v.check(b.MinCalls >= 0, "breaker.min_calls", fmt.Sprintf("must not be negative, got %d", b.MinCalls))
	v.nonNegative("breaker.window", b.Window)
	v.nonNegative("breaker.bucket_period", b.BucketPeriod)
	v.nonNegative("breaker.slow_call_threshold", b.SlowCallThreshold)
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

func (v *validator) err() error { return errors.Join(v.errs...) }
