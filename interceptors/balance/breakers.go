package balance

import (
	"cmp"
	"time"

	"github.com/portico-gateway/portico/interceptors/breaker"
)

// breakerSettings are what WithBreakers gave.
type breakerSettings struct {
	s        breaker.Settings
	observer breaker.Observer
}

// WithBreakers gives every address a circuit breaker of its own, named
// "<upstream>@<addr>", with settings s (Name is filled in; OnStateChange is
// kept and called before obs, which may be nil). The resolver's interceptor
// feeds each breaker with the attempts that went to its address; while a
// breaker is open its address is left out of the list (as an ejection for
// the cool-down), so calls go to the other instances; once the cool-down
// ends the address returns and the breaker, half-open, judges the next
// attempts there. When every address's breaker is open, the addresses all
// stay and Blocked tells the breaker layer to refuse calls. With a single
// address the breakers stay idle: that instance is the upstream, judged by
// the upstream's breaker as without WithBreakers.
func WithBreakers(s breaker.Settings, obs breaker.Observer) Option {
	return func(r *Resolver) { r.breakers = &breakerSettings{s: s, observer: obs} }
}

// newBreaker makes addr's breaker, or nil without WithBreakers. The
// settings were validated by NewResolver.
func (r *Resolver) newBreaker(addr string) *breaker.Breaker {
	if r.breakers == nil {
		return nil
	}
	s := r.breakers.s
	s.Name = r.name + "@" + addr
	user, obs := s.OnStateChange, r.breakers.observer
	var b *breaker.Breaker
	s.OnStateChange = func(name string, from, to breaker.State) {
		r.breakerChanged(addr, b, to)
		if user != nil {
			user(name, from, to)
		}
		if obs != nil {
			obs.StateChange(name, from, to)
		}
	}
	b, _ = breaker.New(s)
	return b
}

// breakerChanged takes addr out of the list while its breaker b is open.
// It runs outside b's lock, never under r.mu (see record).
func (r *Resolver) breakerChanged(addr string, b *breaker.Breaker, to breaker.State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.hosts[addr]
	if !ok || h.brk != b {
		return // an address removed meanwhile
	}
	switch {
	case to == breaker.StateOpen:
		// The cool-down from the settings, not b.RetryAfter: b must not be
		// called under r.mu (a transition it ran would call back here).
		h.openUntil = time.Now().Add(cmp.Or(r.breakers.s.CoolDown, breaker.DefaultCoolDown))
	case !h.openUntil.IsZero():
		h.openUntil = time.Time{}
	default:
		return // half-open after returnDue put it back, or closed: nothing moves
	}
	r.publish(r.manual.UpdateState)
}

// Blocked returns how long calls must wait while every routable address's
// breaker is open, and zero otherwise: the breaker layer's check
// (breaker.WithInstances). It reads one atomic.
func (r *Resolver) Blocked() time.Duration {
	until := r.blockedUntil.Load()
	if until == 0 {
		return 0
	}
	return max(time.Duration(until-time.Now().UnixNano()), 0)
}

// Breakers returns the addresses' breakers in list order; none without
// WithBreakers or with a single address (whose breaker stays idle: the
// upstream's judges its calls).
func (r *Resolver) Breakers() []*breaker.Breaker {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*breaker.Breaker
	if len(r.addrs) < 2 {
		return nil
	}
	for _, a := range r.addrs {
		if b := r.hosts[a].brk; b != nil {
			out = append(out, b)
		}
	}
	return out
}

// earliest returns the earlier of two times, a zero time meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
