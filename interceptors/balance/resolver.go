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
	"github.com/portico-gateway/portico/interceptors/deadline"
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

	// nextReturn is the UnixNano time of the earliest ejection end, 0 when
	// nothing is ejected: the hot path's only check.
	nextReturn atomic.Int64

	mu    sync.Mutex
	addrs []string
	hosts map[string]*host
}

type host struct {
	failures     int       // consecutive
	ejections    int       // times ejected; sets the next ejection's length
	ejectedUntil time.Time // zero when in the list
	lastEjected  time.Time
}

// NewResolver returns a Resolver for upstream name serving addrs
// ("host:port", at least one, no duplicates).
func NewResolver(name string, addrs []string, opts ...Option) (*Resolver, error) {
	r := &Resolver{name: name, observer: nopObserver{}, hosts: map[string]*host{}}
	for _, opt := range opts {
		opt(r)
	}
	r.eject = r.eject.withDefaults()
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
			hosts[a] = &host{}
		}
	}
	r.addrs, r.hosts = slices.Clone(addrs), hosts
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
// ejected ones.
func (r *Resolver) Addresses() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.routed()
}

// routed returns the addresses not ejected. r.mu must be held.
func (r *Resolver) routed() []string {
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
	var next time.Time
	for _, h := range r.hosts {
		if !h.ejectedUntil.IsZero() && (next.IsZero() || h.ejectedUntil.Before(next)) {
			next = h.ejectedUntil
		}
	}
	if next.IsZero() {
		r.nextReturn.Store(0)
	} else {
		r.nextReturn.Store(next.UnixNano())
	}
	eps := make([]resolver.Endpoint, 0, len(r.addrs))
	for _, a := range r.routed() {
		eps = append(eps, resolver.Endpoint{Addresses: []resolver.Address{{Addr: a}}})
	}
	push(resolver.State{Endpoints: eps})
}

// UnaryClientInterceptor returns the interceptor that feeds ejection. Put it
// innermost, after retries, so each attempt is judged on its own peer.
func (r *Resolver) UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	if r.eject.ConsecutiveFailures < 0 {
		return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if next := r.nextReturn.Load(); next != 0 && time.Now().UnixNano() >= next {
			r.returnDue()
		}
		p := new(peer.Peer)
		err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Peer(p))...)
		if p.Addr != nil {
			r.record(ctx, p.Addr.String(), err)
		}
		return err
	}
}

// record counts one call's outcome against addr and ejects it when due.
func (r *Resolver) record(ctx context.Context, addr string, err error) {
	failed := breaker.Classify(err) == breaker.Failure && !deadline.CallerCaused(ctx, err)
	if err != nil && !failed {
		return // says nothing about the instance
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.hosts[addr]
	if !ok || !h.ejectedUntil.IsZero() {
		return
	}
	if !failed {
		h.failures = 0
		return
	}
	h.failures++
	if h.failures < r.eject.ConsecutiveFailures || !r.canEject() {
		return
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
	r.observer.Ejected(r.name, addr)
}

// canEject reports whether one more address may go out. r.mu must be held.
func (r *Resolver) canEject() bool {
	out := len(r.addrs) - len(r.routed())
	limit := max(len(r.addrs)*r.eject.MaxPercent/100, 1)
	return out+1 <= limit && out+1 < len(r.addrs)
}

// returnDue puts back every address whose ejection has ended.
func (r *Resolver) returnDue() {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	var back []string
	for _, a := range r.addrs {
		if h := r.hosts[a]; !h.ejectedUntil.IsZero() && !now.Before(h.ejectedUntil) {
			h.ejectedUntil = time.Time{}
			back = append(back, a)
		}
	}
	if len(back) == 0 {
		return
	}
	r.publish(r.manual.UpdateState)
	for _, a := range back {
		r.observer.Unejected(r.name, a)
	}
}
