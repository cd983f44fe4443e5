package retry

import (
	"context"
	"errors"
	"io"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// StreamClientInterceptor returns the retrying interceptor for server
// streams, with its own budget. Use ClientInterceptors to share one
// budget with the upstream's unary calls.
func StreamClientInterceptor(opts ...Option) grpc.StreamClientInterceptor {
	_, s := ClientInterceptors(opts...)
	return s
}

// ClientInterceptors returns the unary and the stream interceptor of one
// retrier: both spend the same retry budget.
//
// A server stream is retried only before its first message: a setup that
// fails, or a first RecvMsg that returns an error, is tried again under
// the unary rules (the same transient codes, idempotency, attempts,
// backoff, deadline and budget), replaying the request sent before.
// Once a message was received the stream is never retried: the caller has
// seen part of the answer. A clean end with no message is not an error.
// Client and bidirectional streams pass through untouched (their messages
// are not kept for a replay). There is no per-attempt timeout for streams:
// a stream's length is the caller's to bound.
func ClientInterceptors(opts ...Option) (grpc.UnaryClientInterceptor, grpc.StreamClientInterceptor) {
	r := &retrier{options: newOptions(opts), idem: &idempotency{files: protoregistry.GlobalFiles}}
	r.budget = newBudget(r.budgetCfg)
	return r.intercept, r.stream
}

func (r *retrier) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
	if desc.ClientStreams || !desc.ServerStreams {
		return streamer(ctx, desc, cc, method, callOpts...)
	}
	r.budget.call()
	s := &retryStream{r: r, ctx: ctx, desc: desc, cc: cc, method: method, streamer: streamer, opts: callOpts}
	cs, err := streamer(ctx, desc, cc, method, callOpts...)
	if err == nil {
		s.ClientStream = cs
	} else if err = s.next(err); err != nil {
		return nil, err
	}
	return s, nil
}

// retryStream is a server stream that may be opened again until its first
// message arrives. Its methods are not safe for concurrent use with
// RecvMsg (grpc.ClientStream allows one sender and one receiver; this one
// expects SendMsg and CloseSend before the first RecvMsg, as a server
// stream's caller does).
type retryStream struct {
	grpc.ClientStream
	r        *retrier
	ctx      context.Context
	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer
	opts     []grpc.CallOption

	sent     []any // the request, replayed on a new attempt
	closed   bool  // CloseSend was called
	received bool  // a message arrived: no more retries
	attempts int   // retries made
}

func (s *retryStream) SendMsg(m any) error {
	if !s.received {
		s.sent = append(s.sent, m)
	}
	return s.ClientStream.SendMsg(m)
}

func (s *retryStream) CloseSend() error {
	s.closed = true
	return s.ClientStream.CloseSend()
}

func (s *retryStream) RecvMsg(m any) error {
	for {
		err := s.ClientStream.RecvMsg(m)
		if err == nil {
			s.received = true
			return nil
		}
		if s.received || errors.Is(err, io.EOF) {
			return err
		}
		if nerr := s.next(err); nerr != nil {
			return nerr
		}
	}
}

// next opens the stream again after err when the rules allow, replays the
// request, and returns nil; otherwise it returns the error to give the
// caller (err, or the context's while waiting).
func (s *retryStream) next(err error) error {
	for {
		n := s.attempts + 1
		if n >= s.r.maxAttempts {
			return err
		}
		delay, ok := s.r.shouldRetry(s.ctx, s.method, err, false, n)
		if !ok {
			return err
		}
		if werr := s.r.wait(s.ctx, delay); werr != nil {
			return werr
		}
		s.attempts = n
		s.r.observer.Retried(s.r.upstream)
		trace.SpanFromContext(s.ctx).AddEvent("retry", trace.WithAttributes(attribute.Int("attempt", n+1)))
		actx := metadata.AppendToOutgoingContext(s.ctx, AttemptMetadataKey, strconv.Itoa(n))
		var cs grpc.ClientStream
		if cs, err = s.streamer(actx, s.desc, s.cc, s.method, s.opts...); err != nil {
			continue
		}
		if err = s.replay(cs); err != nil {
			continue
		}
		s.ClientStream = cs
		return nil
	}
}

// replay sends the request again on cs; an io.EOF from SendMsg means the
// stream failed, which its RecvMsg reports.
func (s *retryStream) replay(cs grpc.ClientStream) error {
	for _, m := range s.sent {
		if err := cs.SendMsg(m); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
	}
	if s.closed {
		return cs.CloseSend()
	}
	return nil
}
