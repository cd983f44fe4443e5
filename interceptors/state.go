package interceptors

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/portico-gateway/portico/interceptors/balance"
	"github.com/portico-gateway/portico/interceptors/breaker"
)

// State is a snapshot of one upstream's chain for operators: its
// connection, instances with their ejection state, calls in flight and
// every breaker: the upstream's, each method's (Config.Breaker.Methods) and,
// for an upstream of Addresses or a dns:/// target, each instance's, in
// that order. Upstream.State returns it.
type State struct {
	Name         string `json:"name"`
	Target       string `json:"target,omitempty"`
	Connectivity string `json:"connectivity"` // grpc-go's: IDLE, CONNECTING, READY, TRANSIENT_FAILURE, SHUTDOWN
	// InFlight counts calls past the bulkhead and not yet finished.
	InFlight  int64              `json:"inFlight"`
	Instances []balance.Instance `json:"instances"`
	Breakers  []BreakerState     `json:"breakers"`
}

// BreakerState is one breaker's state and the counts of its window.
type BreakerState struct {
	Name string `json:"name"`
	// Instance is the address of an instance's breaker ("10.0.0.7:43101"),
	// empty for the upstream's and each method's.
	Instance string         `json:"instance,omitempty"`
	State    string         `json:"state"`
	Counts   breaker.Counts `json:"counts"`
	// LastTrip is the last time the breaker opened from closed, with the
	// counts that tripped it; nil if it never has. Counts restart in
	// every state, so an open or half-open breaker's are zeros: this says
	// why it is not closed.
	LastTrip *breaker.Trip `json:"lastTrip,omitempty"`
}

func breakerState(b *breaker.Breaker, instance string) BreakerState {
	bs := BreakerState{Name: b.Name(), Instance: instance, State: b.State().String(), Counts: b.Counts()}
	if t, ok := b.LastTrip(); ok {
		bs.LastTrip = &t
	}
	return bs
}

// tracker keeps what State reads: the breakers a chain made and its calls
// in flight. It sits between the bulkhead's observer and the chain's
// reporter.
type tracker struct {
	mu        sync.Mutex
	breakers  []*breaker.Breaker
	instances *balance.Resolver // its instances' breakers; nil for a target grpc-go resolves
	inFlight  atomic.Int64
}

func (t *tracker) track(b *breaker.Breaker) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.breakers = append(t.breakers, b)
}

// State returns the upstream's state now.
func (u *Upstream) State() State {
	st := State{Name: u.name, Target: u.target, Connectivity: u.conn.GetState().String(), Instances: []balance.Instance{}}
	if u.resolver != nil {
		st.Instances = u.resolver.Instances()
	}
	if u.tracker == nil {
		return st
	}
	st.InFlight = u.tracker.inFlight.Load()
	u.tracker.mu.Lock()
	bs := append([]*breaker.Breaker(nil), u.tracker.breakers...)
	u.tracker.mu.Unlock()
	for _, b := range bs {
		st.Breakers = append(st.Breakers, breakerState(b, ""))
	}
	if u.tracker.instances != nil {
		prefix := u.name + "@"
		for _, b := range u.tracker.instances.Breakers() {
			st.Breakers = append(st.Breakers, breakerState(b, strings.TrimPrefix(b.Name(), prefix)))
		}
	}
	return st
}
