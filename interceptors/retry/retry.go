package retry

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/call"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// AttemptMetadataKey is the metadata key carrying the retry number (1 for
// the first retry), shared with go-grpc-middleware's retry package.
const AttemptMetadataKey = retry.AttemptMetadataKey

// UnaryClientInterceptor returns the retrying interceptor described in the
// package documentation. It holds the upstream's retry budget: build one
// interceptor per upstream and share it between that upstream's calls.
func UnaryClientInterceptor(opts ...Option) grpc.UnaryClientInterceptor {
	u, _ := ClientInterceptors(opts...)
	return u
}

type retrier struct {
	*options
	idem   *idempotency
	budget *budget
}

func (r *retrier) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
	r.budget.call()
	st := call.From(ctx)
	timedOut, err := r.attempt(ctx, st, 1, method, req, reply, cc, invoker, callOpts)
	var headers callerHeaders
	ownEarlier := false // an earlier attempt may have created what a replay marker names
	defer func() {
		if ownEarlier {
			headers.dropReplayed()
		}
	}()
	for n := 1; err != nil && n < r.maxAttempts; n++ {
		delay, ok := r.shouldRetry(ctx, method, err, timedOut, n)
		if !ok {
			return err
		}
		if werr := r.wait(ctx, delay); werr != nil {
			return werr
		}
		if n == 1 {
			headers = headersOf(callOpts)
		}
		ownEarlier = ownEarlier || !headers.replayed()
		r.observer.Retried(r.upstream)
		trace.SpanFromContext(ctx).AddEvent("retry", trace.WithAttributes(attribute.Int("attempt", n+1)))
		actx := metadata.AppendToOutgoingContext(ctx, AttemptMetadataKey, strconv.Itoa(n))
		timedOut, err = r.attempt(actx, st, n+1, method, req, reply, cc, invoker, callOpts)
	}
	return err
}

// attempt runs attempt n (from 1) under the per-attempt timeout, if any,
// and reports whether that timeout (not the caller's deadline, not the
// server's answer) ended it: a DEADLINE_EXCEEDED while the caller is still
// live, after the attempt's own deadline ran out. A server's
// DEADLINE_EXCEEDED before then is its answer (its downstream timed out,
// or its budget was too short to start), not a timed-out attempt.
// grpc-timeout is rounded up, so a server never gives up before the
// attempt's deadline; the clock is read as well as actx.Err() because, at
// that instant, the server's answer may arrive before actx's timer has
// cancelled it.
//
// While an attempt's own deadline comes before a caller's that binds the
// call, the attempt's deadline binds: running out of it is the instance's
// slowness, so the call's state (package call) names the upstream its
// owner until the attempt returns.
func (r *retrier) attempt(ctx context.Context, st *call.State, n int, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts []grpc.CallOption) (timedOut bool, err error) {
	st.SetAttempt(n)
	if r.attemptTimeout <= 0 {
		return false, invoker(ctx, method, req, reply, cc, callOpts...)
	}
	actx, cancel := context.WithTimeout(ctx, r.attemptTimeout)
	defer cancel()
	adl, _ := actx.Deadline()
	if dl, _ := ctx.Deadline(); st.Owner() == call.Caller && adl.Before(dl) {
		st.SetOwner(call.Upstream)
		defer st.SetOwner(call.Caller)
	}
	err = invoker(actx, method, req, reply, cc, callOpts...)
	if ctx.Err() != nil || status.Code(err) != codes.DeadlineExceeded {
		return false, err
	}
	return errors.Is(actx.Err(), context.DeadlineExceeded) || !time.Now().Before(adl), err
}

// shouldRetry decides whether retry n (1-based) may run and how long to wait
// before it. Checks run cheapest first; the budget is consulted last so a
// retry that would not run anyway does not spend it.
func (r *retrier) shouldRetry(ctx context.Context, method string, err error, timedOut bool, n int) (time.Duration, bool) {
	if ctx.Err() != nil {
		return 0, false
	}
	pushback, ok := transient(err, timedOut)
	if !ok {
		return 0, false
	}
	if !r.idem.safe(method) && !idempotent(ctx) && !callmeta.HasOutgoingIdempotencyKey(ctx) {
		return 0, false
	}
	delay := max(pushback, r.backoff(n))
	if dl, has := ctx.Deadline(); has && !time.Now().Add(delay).Before(dl) {
		return 0, false
	}
	if !r.budget.tryRetry() {
		r.observer.RetryBudgetExhausted(r.upstream)
		trace.SpanFromContext(ctx).AddEvent("retry budget exhausted")
		return 0, false
	}
	return delay, true
}

// backoff returns gRFC A6's random(0, min(initial*2^(n-1), max)).
func (r *retrier) backoff(n int) time.Duration {
	ceiling := r.maxBackoff
	if n-1 < 32 {
		ceiling = min(r.initialBackoff<<(n-1), r.maxBackoff)
	}
	if ceiling <= 0 {
		ceiling = r.maxBackoff
	}
	return time.Duration(r.rand() * float64(ceiling))
}

// wait sleeps d, or returns ctx's error as a status.
func (r *retrier) wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		t.Stop()
		return status.FromContextError(ctx.Err()).Err()
	}
}
