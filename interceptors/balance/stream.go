package balance

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/portico-gateway/portico/interceptors/call"
)

// StreamClientInterceptor returns the interceptor that judges instances by
// stream setups, as UnaryClientInterceptor does by unary attempts: each
// stream's setup is one attempt, decided at its first RecvMsg (a message or
// a clean end is a success; an error before it is classified as a unary
// attempt's), and counted against the instance the stream went to: its
// ejection and, with WithBreakers and several instances, its breaker. It
// tells the breaker layer above (call.State.SetInstance) whether an instance
// took the setup, so the upstream's breaker leaves that failure to the
// instance's. A stream whose setup fails before a transport is picked (no
// instance) is judged by nobody here. Nil when the Resolver neither ejects
// nor keeps breakers (the layer is then left out).
func (r *Resolver) StreamClientInterceptor() grpc.StreamClientInterceptor {
	if r.eject.ConsecutiveFailures < 0 && r.breakers == nil {
		return nil
	}
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		start := time.Now()
		if next := r.nextReturn.Load(); next != 0 && start.UnixNano() >= next {
			r.returnDue()
		}
		cs, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			return nil, err // no transport stream: no instance to judge
		}
		return &judgedStream{ClientStream: cs, r: r, ctx: ctx, start: start}, nil
	}
}

// judgedStream judges its instance once, at the first RecvMsg.
type judgedStream struct {
	grpc.ClientStream
	r     *Resolver
	ctx   context.Context
	start time.Time
	once  sync.Once
}

func (s *judgedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	s.once.Do(func() {
		judged := err
		if errors.Is(err, io.EOF) {
			judged = nil // a clean end: the instance answered
		}
		p, _ := peer.FromContext(s.ClientStream.Context())
		took := p != nil && p.Addr != nil
		several := s.r.breakers != nil && s.r.several.Load()
		if took {
			call.From(s.ctx).SetInstance(p.Addr.String(), several)
		} else {
			call.From(s.ctx).SetInstance("", false)
		}
		if took {
			s.r.record(s.ctx, s.r.names.name(p.Addr), s.start, judged, several)
		}
	})
	return err
}
