package interceptors

import (
	"cmp"
	"context"
	"log/slog"

	"github.com/portico-gateway/portico/interceptors/balance"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/bulkhead"
	"github.com/portico-gateway/portico/interceptors/deadline"
	"github.com/portico-gateway/portico/interceptors/retry"
)

// This file turns a validated Config into each package's options.

func (s *settings) deadlineOptions() []deadline.Option {
	opts := []deadline.Option{
		deadline.WithUpstream(s.cfg.Name),
		deadline.WithTimeout(cmp.Or(s.cfg.Timeout, DefaultTimeout)),
		deadline.WithMinBudget(s.cfg.MinBudget),
	}
	for m, d := range s.cfg.MethodTimeouts {
		opts = append(opts, deadline.WithMethodTimeout(m, d))
	}
	return opts
}

func (s *settings) bulkheadOptions(rep *reporter) []bulkhead.Option {
	b := s.cfg.Bulkhead
	return []bulkhead.Option{
		bulkhead.WithUpstream(s.cfg.Name),
		bulkhead.WithLimits(b.MaxInFlight, b.Queue, b.MaxWait),
		bulkhead.WithObserver(rep),
	}
}

// breakerSettings are the settings of every breaker of the upstream: its
// own, each method's and each instance's.
func (s *settings) breakerSettings() breaker.Settings {
	b := s.cfg.Breaker
	bs := breaker.Settings{
		MaxRequests:         b.HalfOpenProbes,
		ConsecutiveFailures: b.ConsecutiveFailures,
		FailureRate:         b.FailureRate,
		MinCalls:            b.MinCalls,
		Window:              b.Window,
		BucketPeriod:        b.BucketPeriod,
		SlowCallThreshold:   b.SlowCallThreshold,
		CoolDown:            b.CoolDown,
	}
	if s.breaker != nil {
		bs = *s.breaker
	}
	return bs
}

func (s *settings) breakerOptions(rep *reporter, inst breaker.Instances) []breaker.Option {
	opts := []breaker.Option{
		breaker.WithUpstream(s.cfg.Name),
		breaker.WithSettings(s.breakerSettings()),
		breaker.WithMethods(s.cfg.Breaker.Methods...),
		breaker.WithObserver(rep),
		breaker.WithTracker(rep.tracker.track),
	}
	if inst != nil {
		opts = append(opts, breaker.WithInstances(inst))
	}
	return opts
}

func (s *settings) retryOptions(rep *reporter) []retry.Option {
	r := s.cfg.Retry
	return []retry.Option{
		retry.WithUpstream(s.cfg.Name),
		retry.WithMaxAttempts(cmp.Or(r.MaxAttempts, retry.DefaultMaxAttempts)),
		retry.WithBackoff(r.InitialBackoff, r.MaxBackoff),
		retry.WithAttemptTimeout(r.AttemptTimeout),
		retry.WithBudget(r.BudgetRatio, r.BudgetWindow, r.BudgetMinPerSecond),
		retry.WithObserver(rep),
	}
}

func (s *settings) ejection() balance.Ejection {
	e := s.cfg.Ejection
	return balance.Ejection{
		ConsecutiveFailures: e.ConsecutiveFailures, BaseTime: e.BaseTime,
		MaxTime: e.MaxTime, MaxPercent: e.MaxPercent,
	}
}

// reporter fans the chain's events out to the logger and the metrics.
type reporter struct {
	metrics Metrics
	logger  *slog.Logger
	tracker *tracker // what Upstream.State reads
}

// Compile-time interface guard.
var _ Metrics = (*reporter)(nil)

func (r *reporter) Retried(upstream string) {
	if r.metrics != nil {
		r.metrics.Retried(upstream)
	}
}

func (r *reporter) RetryBudgetExhausted(upstream string) {
	if r.metrics != nil {
		r.metrics.RetryBudgetExhausted(upstream)
	}
}

func (r *reporter) StateChange(name string, from, to breaker.State) {
	level := slog.LevelInfo
	if to == breaker.StateOpen {
		level = slog.LevelWarn
	}
	r.logger.Log(context.Background(), level, "circuit breaker state change", "breaker", name, "from", from.String(), "to", to.String())
	if r.metrics != nil {
		r.metrics.StateChange(name, from, to)
	}
}

func (r *reporter) Overloaded(upstream string) {
	if r.metrics != nil {
		r.metrics.Overloaded(upstream)
	}
}

func (r *reporter) InFlight(upstream string, delta int) {
	r.tracker.inFlight.Add(int64(delta))
	if r.metrics != nil {
		r.metrics.InFlight(upstream, delta)
	}
}

func (r *reporter) Ejected(upstream, addr string) {
	r.logger.Warn("upstream address ejected", "upstream", upstream, "addr", addr)
	if r.metrics != nil {
		r.metrics.Ejected(upstream, addr)
	}
}

func (r *reporter) Unejected(upstream, addr string) {
	r.logger.Info("upstream address returned", "upstream", upstream, "addr", addr)
	if r.metrics != nil {
		r.metrics.Unejected(upstream, addr)
	}
}
