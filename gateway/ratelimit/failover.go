package ratelimit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/portico-gateway/portico/interceptors/breaker"
)

// Outage is what a Failover does while its shared store fails.
type Outage int

// Outage policies.
const (
	// OutageLocal decides in the local store: each edge enforces the
	// quotas alone (N edges admit up to N times a quota). The default.
	OutageLocal Outage = iota
	// OutageOpen admits every request but those of callers known to be
	// banned.
	OutageOpen
	// OutageClosed refuses every request with ErrUnavailable.
	OutageClosed
)

// String returns the policy's config name.
func (o Outage) String() string {
	switch o {
	case OutageOpen:
		return "open"
	case OutageClosed:
		return "closed"
	}
	return "local"
}

// Defaults of FailoverSettings.
const (
	DefaultTimeout  = 50 * time.Millisecond
	DefaultCoolDown = time.Second
	DefaultFailures = 2
)

// FailoverSettings configures NewFailover; zero fields mean the defaults.
type FailoverSettings struct {
	// Timeout bounds each call to the shared store. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// Failures in a row open the breaker: calls skip the shared store for
	// CoolDown, then one trial call decides whether it is back. Zero means
	// DefaultFailures; CoolDown zero means DefaultCoolDown.
	Failures int
	CoolDown time.Duration
	// Outage is the policy while the breaker is open or a call fails.
	Outage Outage
	// OnChange, when set, is called when the shared store starts failing
	// (degraded true) and when it is back, outside any lock.
	OnChange func(degraded bool)
}

// Failover decides in a shared store (Redis) and falls back to a local one
// while the shared store fails; see the package doc.
type Failover struct {
	shared   Store
	local    *Local
	s        FailoverSettings
	breaker  *breaker.Breaker
	degraded atomic.Bool
	// rewrite is set while the shared store may have lost the bans the
	// local one holds (from an outage on): they are written back
	// (BanWriter) before the next decision made there.
	rewrite atomic.Bool
}

// NewFailover returns a Failover over shared, falling back to local (which
// also keeps the bans seen in shared).
func NewFailover(shared Store, local *Local, s FailoverSettings) (*Failover, error) {
	if shared == nil || local == nil {
		return nil, errors.New("ratelimit: failover needs a shared and a local store")
	}
	if s.Timeout < 0 || s.Failures < 0 || s.CoolDown < 0 || s.Outage < OutageLocal || s.Outage > OutageClosed {
		return nil, fmt.Errorf("ratelimit: invalid failover settings %+v", s)
	}
	s.Timeout = cmp.Or(s.Timeout, DefaultTimeout)
	f := &Failover{shared: shared, local: local, s: s}
	b, err := breaker.New(breaker.Settings{
		Name:                "ratelimit-redis",
		ConsecutiveFailures: cmp.Or(s.Failures, DefaultFailures),
		FailureRate:         -1,
		CoolDown:            cmp.Or(s.CoolDown, DefaultCoolDown),
		IsSuccessful:        func(err error) bool { return err == nil },
		IsExcluded:          func(err error) bool { return errors.Is(err, context.Canceled) },
		OnStateChange:       func(_ string, _, to breaker.State) { f.setDegraded(to != breaker.StateClosed) },
	})
	if err != nil {
		return nil, fmt.Errorf("ratelimit: %w", err)
	}
	f.breaker = b
	return f, nil
}

// Degraded reports whether the shared store is failing, so decisions
// follow the outage policy.
func (f *Failover) Degraded() bool { return f.degraded.Load() }

// Outage returns the outage policy.
func (f *Failover) Outage() Outage { return f.s.Outage }

func (f *Failover) setDegraded(v bool) {
	if v {
		f.rewrite.Store(true)
	}
	if f.degraded.Swap(v) != v && f.s.OnChange != nil {
		f.s.OnChange(v)
	}
}

// Allow decides req in the shared store within Timeout, or by the outage
// policy when the breaker is open or the call fails.
func (f *Failover) Allow(ctx context.Context, req *Request) (Decision, error) {
	if t, err := f.breaker.Admit(); err == nil {
		cctx, cancel := context.WithTimeout(ctx, f.s.Timeout)
		var d Decision
		err := f.writeBans(cctx)
		if err == nil {
			d, err = f.shared.Allow(cctx, req)
		}
		cancel()
		if err != nil && ctx.Err() != nil {
			f.breaker.Done(t, breaker.Excluded)
		} else if err != nil {
			f.breaker.Done(t, breaker.Failure)
		} else {
			f.breaker.Done(t, breaker.Success)
			if d.Banned && req.Caller != "" {
				f.local.Ban(req.Caller, d.RetryAfter)
			}
			return d, nil
		}
	}
	switch f.s.Outage {
	case OutageOpen:
		if d, _ := f.local.banned(req); d.Banned {
			return d, nil
		}
		return Decision{Allowed: true, Denied: -1}, nil
	case OutageClosed:
		return Decision{Denied: -1}, ErrUnavailable
	}
	return f.local.Allow(ctx, req)
}

// writeBans writes the local store's bans back to the shared one when an
// outage may have lost them (a Redis restarted empty would lift every
// ban the edge held through the outage), once; a failure leaves it to the
// next call.
func (f *Failover) writeBans(ctx context.Context) error {
	bw, ok := f.shared.(BanWriter)
	if !ok || !f.rewrite.Load() || !f.rewrite.CompareAndSwap(true, false) {
		return nil
	}
	if err := bw.WriteBans(ctx, f.local.bansLeft()); err != nil {
		f.rewrite.Store(true)
		return err
	}
	return nil
}
