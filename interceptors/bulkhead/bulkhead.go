package bulkhead

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// UnaryClientInterceptor returns the bulkhead described in the package
// documentation. Build one per upstream: the slots belong to it.
func UnaryClientInterceptor(opts ...Option) grpc.UnaryClientInterceptor {
	o := &options{
		upstream: "upstream", max: DefaultMax, queue: DefaultQueue, maxWait: DefaultMaxWait,
		observer: nopObserver{},
	}
	for _, opt := range opts {
		opt(o)
	}
	b := &bulkhead{options: o, slots: make(chan struct{}, o.max)}
	return b.intercept
}

type bulkhead struct {
	*options
	slots   chan struct{}
	waiting atomic.Int64
}

func (b *bulkhead) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
	if err := b.acquire(ctx); err != nil {
		trace.SpanFromContext(ctx).AddEvent("bulkhead full")
		return err
	}
	b.observer.InFlight(b.upstream, 1)
	defer func() {
		<-b.slots
		b.observer.InFlight(b.upstream, -1)
	}()
	return invoker(ctx, method, req, reply, cc, callOpts...)
}

func (b *bulkhead) acquire(ctx context.Context) error {
	select {
	case b.slots <- struct{}{}:
		return nil
	default:
	}
	if b.maxWait <= 0 || b.waiting.Add(1) > int64(b.queue) {
		if b.maxWait > 0 {
			b.waiting.Add(-1)
		}
		return b.overloaded()
	}
	defer b.waiting.Add(-1)
	t := time.NewTimer(b.maxWait)
	defer t.Stop()
	select {
	case b.slots <- struct{}{}:
		return nil
	case <-t.C:
		return b.overloaded()
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			return status.FromContextError(ctx.Err()).Err()
		}
		return b.overloaded()
	}
}

func (b *bulkhead) overloaded() error {
	b.observer.Overloaded(b.upstream)
	after := max(b.maxWait, time.Millisecond)
	err := rpcerr.New(codes.Unavailable, reason.Domain, reason.Overloaded,
		"too many calls in flight to "+b.upstream,
		"upstream", b.upstream, "retryAfterMs", strconv.FormatInt(after.Milliseconds(), 10))
	return rpcerr.WithRetryInfo(err, after)
}
