package breaker

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/portico-gateway/portico/interceptors/deadline"
	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// UnaryClientInterceptor returns an interceptor that runs every call through
// the upstream's breaker (or the method's, see WithMethods). A call the
// breaker refuses fails at once with UNAVAILABLE, reason CIRCUIT_OPEN,
// metadata {upstream, retryAfterMs} and a RetryInfo of the same delay. It
// returns the error of Settings.Validate.
func UnaryClientInterceptor(opts ...Option) (grpc.UnaryClientInterceptor, error) {
	g, err := newGuard(opts)
	if err != nil {
		return nil, err
	}
	return g.unary, nil
}

// ClientInterceptors returns the unary and the stream interceptor of one
// set of breakers: a stream setup and a unary call to the same upstream (or
// method) count against the same breaker. See StreamClientInterceptor for
// how a stream is counted.
func ClientInterceptors(opts ...Option) (grpc.UnaryClientInterceptor, grpc.StreamClientInterceptor, error) {
	g, err := newGuard(opts)
	if err != nil {
		return nil, nil, err
	}
	return g.unary, g.stream, nil
}

// guard is the breakers of one upstream: its own and each method's.
type guard struct {
	o         *options
	shared    *Breaker
	perMethod map[string]*Breaker
}

func newGuard(opts []Option) (*guard, error) {
	o := &options{upstream: "upstream"}
	for _, opt := range opts {
		opt(o)
	}
	newBreaker := func(name string) (*Breaker, error) {
		s := o.settings
		s.Name = name
		user := s.OnStateChange
		s.OnStateChange = func(name string, from, to State) {
			if user != nil {
				user(name, from, to)
			}
			if o.observer != nil {
				o.observer.StateChange(name, from, to)
			}
		}
		b, err := New(s)
		if err == nil && o.track != nil {
			o.track(b)
		}
		return b, err
	}
	shared, err := newBreaker(o.upstream)
	if err != nil {
		return nil, err
	}
	g := &guard{o: o, shared: shared, perMethod: make(map[string]*Breaker, len(o.methods))}
	for _, m := range o.methods {
		if g.perMethod[m], err = newBreaker(o.upstream + m); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// admit picks the method's breaker and admits a call, or returns the
// CIRCUIT_OPEN error.
func (g *guard) admit(ctx context.Context, method string) (*Breaker, Ticket, error) {
	b := g.shared
	if mb, ok := g.perMethod[method]; ok {
		b = mb
	}
	if g.o.instances != nil {
		if d := g.o.instances.Blocked(); d > 0 {
			// A refused call counts against the upstream's breaker, so
			// it opens too when every instance's has: the upstream is
			// down, and says so in its state and metrics.
			if t, err := b.Admit(); err == nil {
				b.Done(t, Failure)
			}
			trace.SpanFromContext(ctx).AddEvent("breaker open")
			return nil, Ticket{}, blocked(g.o.upstream, d)
		}
	}
	t, err := b.Admit()
	if err != nil {
		trace.SpanFromContext(ctx).AddEvent("breaker open")
		return nil, Ticket{}, open(g.o.upstream, b)
	}
	return b, t, nil
}

func (g *guard) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
	b, t, err := g.admit(ctx, method)
	if err != nil {
		return err
	}
	if g.o.instances == nil {
		err = invoker(ctx, method, req, reply, cc, callOpts...)
		b.Done(t, outcome(ctx, b, err))
		return err
	}
	a, opts := attribute(callOpts)
	err = invoker(ctx, method, req, reply, cc, opts...)
	oc := outcome(ctx, b, err)
	if oc == Failure && a.instance.Load() {
		oc = Excluded // the instance's breaker counted it
	}
	b.Done(t, oc)
	a.release()
	return err
}

// outcome classifies a finished call. The caller's own doing never counts:
// a cancelled context, or a deadline shorter than the upstream's timeout.
func outcome(ctx context.Context, b *Breaker, err error) Outcome {
	if err == nil {
		return Success
	}
	if deadline.CallerCaused(ctx, err) {
		return Excluded
	}
	return b.outcome(err)
}

func open(upstream string, b *Breaker) error {
	after := b.RetryAfter()
	err := rpcerr.New(codes.Unavailable, reason.Domain, reason.CircuitOpen,
		"circuit breaker "+b.Name()+" is open",
		"upstream", upstream, "retryAfterMs", strconv.FormatInt(after.Milliseconds(), 10))
	return rpcerr.WithRetryInfo(err, after)
}
