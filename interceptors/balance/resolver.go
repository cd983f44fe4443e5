package balance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/call"
)

// Scheme is the target scheme of a Resolver, local to the ClientConn it is
// passed to (grpc.WithResolvers), so it never collides with another.
const Scheme = "portico"

// Resolver serves one upstream's address list to one ClientConn and ejects
// failing addresses from it. Use it with exactly one ClientConn: dial
// Target() with DialOption().
type Resolver struct {
	name     string
	eject    Ejection
	observer Observer
	manual   *manual.Resolver

	// nextReturn is the UnixNano time of the earliest ejection or breaker
	// cool-down end, 0 when nothing is out: the hot path's only check.
	nextReturn atomic.Int64
	// blockedUntil is the UnixNano time the first cool-down ends while
	// every routable instance's breaker is open, 0 otherwise (Blocked).
	blockedUntil atomic.Int64

	breakers *breakerSettings // WithBreakers; nil means none
	// several is true while the list has two addresses or more: only then
	// do the instances' breakers judge (one instance is the upstream).
	several atomic.Bool

	names addrNames // the attempts' peers as text

	mu    sync.Mutex
	addrs []string
	hosts map[string]*host
}

type host struct {
	failures     int       // consecutive
	ejections    int       // times ejected; sets the next ejection's length
	ejectedUntil time.Time // zero when in the list
	lastEjected  time.Time
	brk          *breaker.Breaker // the instance's breaker; nil without WithBreakers
	openUntil    time.Time        // while brk is open: the end of its cool-down
}

// NewResolver returns a Resolver for upstream name serving addrs
// ("host:port", at least one, no duplicates).
func NewResolver(name string, addrs []string, opts ...Option) (*Resolver, error) {
	r := &Resolver{name: name, observer: nopObserver{}, hosts: map[string]*host{}}
	for _, opt := range opts {
		opt(r)
	}
	r.eject = r.eject.withDefaults()
	if r.breakers != nil {
		if err := r.breakers.s.Validate(); err != nil {
			return nil, err
		}
	}
	r.manual = manual.NewBuilderWithScheme(Scheme)
	if err := r.setAddresses(addrs, r.manual.InitialState); err != nil {
		return nil, err
	}
	return r, nil
}

// Target returns the target to dial: "portico:///<name>".
func (r *Resolver) Target() string { return Scheme + ":///" + r.name }

// DialOption installs the resolver on the ClientConn being dialled.
func (r *Resolver) DialOption() grpc.DialOption { return grpc.WithResolvers(r.manual) }

// SetAddresses replaces the address list. Addresses that stay keep their
// failure counts and ejections; new ones start clean.
func (r *Resolver) SetAddresses(addrs []string) error {
	return r.setAddresses(addrs, r.manual.UpdateState)
}

func (r *Resolver) setAddresses(addrs []string, push func(resolver.State)) error {
	if err := validAddresses(addrs); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	hosts := make(map[string]*host, len(addrs))
	for _, a := range addrs {
		if h, ok := r.hosts[a]; ok {
			hosts[a] = h
		} else {
			hosts[a] = &host{brk: r.newBreaker(a)}
		}
	}
	r.addrs, r.hosts = slices.Clone(addrs), hosts
	r.several.Store(len(addrs) > 1)
	r.publish(push)
	return nil
}

func validAddresses(addrs []string) error {
	if len(addrs) == 0 {
		return errors.New("balance: no addresses")
	}
	seen := make(map[string]bool, len(addrs))
	for i, a := range addrs {
		if a == "" {
			return fmt.Errorf("balance: addresses[%d] is empty", i)
		}
		if seen[a] {
			return fmt.Errorf("balance: addresses[%d] %q given twice", i, a)
		}
		seen[a] = true
	}
	return nil
}

// Addresses returns the addresses calls may go to now: the list minus the
// ejected ones and those whose breaker is open (all of those when every
// breaker is open).
func (r *Resolver) Addresses() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.routed()
}

// routed returns the addresses not ejected and whose breaker is not open;
// when every breaker of those is open, all of them (calls are refused by
// Blocked until one half-opens, and their connections stay warm). r.mu must
// be held.
func (r *Resolver) routed() []string {
	out := make([]string, 0, len(r.addrs))
	for _, a := range r.addrs {
		if h := r.hosts[a]; h.ejectedUntil.IsZero() && h.openUntil.IsZero() {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		out = r.notEjected()
	}
	return out
}

// notEjected returns the addresses not ejected. r.mu must be held.
func (r *Resolver) notEjected() []string {
	out := make([]string, 0, len(r.addrs))
	for _, a := range r.addrs {
		if r.hosts[a].ejectedUntil.IsZero() {
			out = append(out, a)
		}
	}
	return out
}

// publish pushes the routed addresses and the earliest return time. r.mu
// must be held, so updates reach grpc-go in the order they were made.
func (r *Resolver) publish(push func(resolver.State)) {
	var next, blocked time.Time
	allOpen := true
	for _, h := range r.hosts {
		next = earliest(next, h.ejectedUntil)
		next = earliest(next, h.openUntil)
		if h.ejectedUntil.IsZero() {
			allOpen = allOpen && !h.openUntil.IsZero()
			blocked = earliest(blocked, h.openUntil)
		}
	}
	r.nextReturn.Store(unixNano(next))
	if !allOpen {
		blocked = time.Time{}
	}
	r.blockedUntil.Store(unixNano(blocked))
	eps := make([]resolver.Endpoint, 0, len(r.addrs))
	for _, a := range r.routed() {
		// ServerName: each instance's TLS certificate is checked against
		// the host dialled (and :authority names it), not against the
		// upstream's name, which no certificate holds. A connection with
		// its own authority (a DNS name, WithAuthority) keeps that one:
		// grpc-go prefers it. The address comes from config, never a
		// client.
		eps = append(eps, resolver.Endpoint{Addresses: []resolver.Address{{Addr: a, ServerName: a}}})
	}
	push(resolver.State{Endpoints: eps})
}

// UnaryClientInterceptor returns the interceptor that judges instances: it
// feeds ejection and the instances' breakers (WithBreakers) with each
// attempt's outcome, by the address the attempt went to, and records in
// the call's state (call.State.SetInstance) the instance that took the
// attempt and whether its breaker judged it, for the breaker layer above.
// Put it innermost, after retries, so each attempt is judged on its own
// peer.
func (r *Resolver) UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	if r.eject.ConsecutiveFailures < 0 && r.breakers == nil {
		return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		start := time.Now()
		if next := r.nextReturn.Load(); next != 0 && start.UnixNano() >= next {
			r.returnDue()
		}
		p := new(peer.Peer)
		err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Peer(p))...)
		several := r.breakers != nil && r.several.Load()
		if p.Addr == nil {
			call.From(ctx).SetInstance("", false) // no instance took it
			return err
		}
		addr := r.names.name(p.Addr)
		call.From(ctx).SetInstance(addr, several)
		r.record(ctx, addr, start, err, several)
		return err
	}
}

// attemptOutcome judges one attempt for its instance: the codes Classify
// calls failures, minus attempts the caller cut short.
func attemptOutcome(ctx context.Context, err error) breaker.Outcome {
	if err != nil && call.CallerCaused(ctx, err) {
		return breaker.Excluded
	}
	return breaker.Classify(err)
}

// record counts one attempt's outcome against addr: its breaker (with
// several instances), and its ejection when due.
func (r *Resolver) record(ctx context.Context, addr string, start time.Time, err error, several bool) {
	o := attemptOutcome(ctx, err)
	if o == breaker.Excluded {
		return // says nothing about the instance
	}
	r.mu.Lock()
	h, ok := r.hosts[addr]
	if !ok {
		r.mu.Unlock()
		return
	}
	var brk *breaker.Breaker
	if several {
		brk = h.brk
	}
	ejected := r.judge(h, addr, o == breaker.Failure)
	r.mu.Unlock()
	if brk != nil {
		// Outside r.mu: a transition calls back into the resolver.
		brk.Record(start, o)
	}
	if ejected {
		r.observer.Ejected(r.name, addr)
	}
}

// judge counts an outcome for ejection and reports whether it ejected
// addr. r.mu must be held.
func (r *Resolver) judge(h *host, addr string, failed bool) bool {
	if r.eject.ConsecutiveFailures < 0 || !h.ejectedUntil.IsZero() {
		return false
	}
	if !failed {
		h.failures = 0
		return false
	}
	h.failures++
	if h.failures < r.eject.ConsecutiveFailures || !r.canEject() {
		return false
	}
	now := time.Now()
	if !h.lastEjected.IsZero() && now.Sub(h.lastEjected) > r.eject.MaxTime {
		h.ejections = 0
	}
	h.ejections++
	h.failures = 0
	h.lastEjected = now
	h.ejectedUntil = now.Add(min(time.Duration(h.ejections)*r.eject.BaseTime, r.eject.MaxTime))
	r.publish(r.manual.UpdateState)
	return true
}

// canEject reports whether one more address may go out. r.mu must be held.
func (r *Resolver) canEject() bool {
	out := len(r.addrs) - len(r.notEjected())
	limit := max(len(r.addrs)*r.eject.MaxPercent/100, 1)
	return out+1 <= limit && out+1 < len(r.addrs)
}

// returnDue puts back every address whose ejection has ended.
func (r *Resolver) returnDue() {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	var back []string
	cooled := false
	for _, a := range r.addrs {
		h := r.hosts[a]
		if !h.ejectedUntil.IsZero() && !now.Before(h.ejectedUntil) {
			h.ejectedUntil = time.Time{}
			back = append(back, a)
		}
		if !h.openUntil.IsZero() && !now.Before(h.openUntil) {
			h.openUntil = time.Time{} // its breaker half-opens: probes may go
			cooled = true
		}
	}
	if len(back) == 0 && !cooled {
		return
	}
	r.publish(r.manual.UpdateState)
	for _, a := range back {
		r.observer.Unejected(r.name, a)
	}
}
