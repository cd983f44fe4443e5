package breaker

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/interceptors/call"
)

// StreamClientInterceptor returns an interceptor that counts stream setups
// against the upstream's breaker (or the method's, see WithMethods). Use
// ClientInterceptors instead to share the breakers with unary calls.
//
// A stream setup is one call. Its outcome is decided by the first
// RecvMsg: a message (or a clean end with none) is a Success; an error
// before it is classified as a unary call's error is (UNAVAILABLE,
// DEADLINE_EXCEEDED... fail; the caller's own cancellation or short
// deadline is Excluded). An error after the first message does not count:
// the upstream was there and answered. A stream the caller abandons before
// the first RecvMsg returned is Excluded when its context ends, so a
// half-open probe slot is never held for good. An open breaker refuses the
// setup with the unary CIRCUIT_OPEN error, before anything is sent.
//
// With WithInstances, a stream is refused while every instance's breaker
// is open, and a failed setup that an instance took (the resolver's stream
// interceptor says so in the call's state, as for unary attempts) is
// left to that instance's breaker; one no instance took (no connection
// ready) counts against the upstream's.
func StreamClientInterceptor(opts ...Option) (grpc.StreamClientInterceptor, error) {
	g, err := newGuard(opts)
	if err != nil {
		return nil, err
	}
	return g.stream, nil
}

func (g *guard) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
	b, t, err := g.admit(ctx, method)
	if err != nil {
		return nil, err
	}
	var st *call.State
	if g.o.instances != nil {
		ctx, st = call.Ensure(ctx)
		st.SetInstance("", false)
	}
	done := func(err error) {
		oc := outcome(ctx, b, err)
		if _, judged := st.Instance(); oc == Failure && judged {
			oc = Excluded // the instance's breaker counted it
		}
		b.Done(t, oc)
	}
	cs, err := streamer(ctx, desc, cc, method, callOpts...)
	if err != nil {
		done(err)
		return nil, err
	}
	s := &setupStream{ClientStream: cs}
	s.decide = func(err error) { s.once.Do(func() { done(err) }) }
	s.stop = context.AfterFunc(ctx, func() { s.decide(ctx.Err()) })
	return s, nil
}

// setupStream decides its setup's outcome at the first RecvMsg.
type setupStream struct {
	grpc.ClientStream
	once   sync.Once
	decide func(err error)
	stop   func() bool
}

func (s *setupStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if errors.Is(err, io.EOF) {
		s.decide(nil) // a clean end: the upstream answered
	} else {
		s.decide(err)
	}
	s.stop()
	return err
}
