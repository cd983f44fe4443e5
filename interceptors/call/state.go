package call

import (
	"context"
	"errors"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Owner says whose deadline binds a call.
type Owner uint8

const (
	// NoOwner: the call has no deadline, or no layer has judged it yet.
	NoOwner Owner = iota
	// Upstream: the deadline is the upstream's budget (the chain's
	// timeout, a route deadline the edge marked, an attempt's own
	// timeout). Running out of it is the upstream's failure.
	Upstream
	// Caller: the caller's deadline, shorter than the upstream's budget,
	// binds. Running out of it says nothing about the upstream.
	Caller
)

// String returns "none", "upstream" or "caller".
func (o Owner) String() string {
	switch o {
	case Upstream:
		return "upstream"
	case Caller:
		return "caller"
	}
	return "none"
}

// State is one call's state (see the package documentation). The zero
// value is a call no layer has touched yet.
type State struct {
	owner   Owner
	attempt int
	// mu guards instance and judged: a stream's setup is judged by its
	// receiver while its breaker may decide at the context's end.
	mu       sync.Mutex
	instance string
	judged   bool
}

type key struct{}

// NewContext returns ctx carrying s as its call's state. The chain's top
// calls it once per call, with a fresh State.
func NewContext(ctx context.Context, s *State) context.Context {
	return context.WithValue(ctx, key{}, s)
}

// From returns the state of the call ctx belongs to, or nil outside a
// chain.
func From(ctx context.Context) *State {
	s, _ := ctx.Value(key{}).(*State)
	return s
}

// Ensure returns ctx and its call's state, adding a fresh one to ctx when
// it has none: for a layer whose write another layer must read, when
// the layers run without the chain's top.
func Ensure(ctx context.Context) (context.Context, *State) {
	if s := From(ctx); s != nil {
		return ctx, s
	}
	s := new(State)
	return NewContext(ctx, s), s
}

// Owner returns who owns the deadline that binds the call now.
func (s *State) Owner() Owner {
	if s == nil {
		return NoOwner
	}
	return s.owner
}

// SetOwner records who owns the deadline that binds the call now.
func (s *State) SetOwner(o Owner) {
	if s != nil {
		s.owner = o
	}
}

// Attempt returns the number of the attempt running or last run, from 1;
// 0 before the first.
func (s *State) Attempt() int {
	if s == nil {
		return 0
	}
	return s.attempt
}

// SetAttempt records that attempt n (from 1) starts.
func (s *State) SetAttempt(n int) {
	if s != nil {
		s.attempt = n
	}
}

// Instance returns the address of the instance that took the last
// attempt ("" when it found none, or no layer saw it) and whether that
// instance's own breaker judged the attempt.
func (s *State) Instance() (addr string, judged bool) {
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.instance, s.judged
}

// SetInstance records the instance that took the last attempt and whether
// its own breaker judged it.
func (s *State) SetInstance(addr string, judged bool) {
	if s != nil {
		s.mu.Lock()
		s.instance, s.judged = addr, judged
		s.mu.Unlock()
	}
}

// CallerCaused reports whether err, the failure of a call or attempt made
// with ctx, is the caller's doing rather than the upstream's: the caller
// cancelled, or the call ran out of a deadline the caller owns. The code
// is enough in the second case: the server may report DEADLINE_EXCEEDED a
// moment before the caller's own context expires.
func CallerCaused(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return true
	}
	return From(ctx).Owner() == Caller && (ctx.Err() != nil || status.Code(err) == codes.DeadlineExceeded)
}
