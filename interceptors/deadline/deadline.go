package deadline

import (
	"context"
	"errors"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

type callerBoundKey struct{}

type upstreamDeadlineKey struct{}

// WithUpstreamDeadline marks ctx's deadline as the upstream's own budget,
// set by a layer in front of the chain rather than by a caller: the REST
// edge applies a route's configured timeout itself. Running out of such a
// deadline is the upstream's failure (breakers count it), exactly as if the
// chain's own timeout had fired.
func WithUpstreamDeadline(ctx context.Context) context.Context {
	return context.WithValue(ctx, upstreamDeadlineKey{}, true)
}

type attemptBoundKey struct{}

// WithAttemptTimeout is context.WithTimeout for one attempt of a call
// (package retry's per-attempt timeout). When the attempt's deadline comes
// before ctx's, running out of it is the instance's slowness even where the
// caller's deadline binds the call: CallerCaused reports false for it.
func WithAttemptTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	dl, has := ctx.Deadline()
	actx, cancel := context.WithTimeout(ctx, d)
	if has && CallerBound(ctx) {
		if adl, _ := actx.Deadline(); adl.Before(dl) {
			actx = context.WithValue(actx, attemptBoundKey{}, true)
		}
	}
	return actx, cancel
}

// CallerBound reports whether ctx is a call context whose deadline was set by
// the caller rather than by the upstream's timeout: the caller had less time
// left than the upstream is allowed.
func CallerBound(ctx context.Context) bool {
	return ctx.Value(callerBoundKey{}) != nil
}

// CallerCaused reports whether err, the failure of a call made with ctx, is
// the caller's doing rather than the upstream's: the caller cancelled, or
// the call ran out of a deadline the caller set shorter than the upstream's
// timeout. The code is enough in the second case: the server may report
// DEADLINE_EXCEEDED a moment before the caller's own context expires.
func CallerCaused(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return true
	}
	if ctx.Value(attemptBoundKey{}) != nil {
		return false // its own per-attempt deadline, before the caller's, ran out
	}
	return CallerBound(ctx) && (ctx.Err() != nil || status.Code(err) == codes.DeadlineExceeded)
}

// UnaryClientInterceptor returns the client interceptor described in the
// package documentation.
func UnaryClientInterceptor(opts ...Option) grpc.UnaryClientInterceptor {
	o := newOptions(opts)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		now := time.Now()
		timeout := o.timeoutFor(method)
		callerDL, hasDL := ctx.Deadline()
		if hasDL && callerDL.Sub(now) < max(o.minBudget, 1) {
			return o.budgetExhausted(callerDL.Sub(now))
		}
		switch {
		case timeout > 0 && (!hasDL || now.Add(timeout).Before(callerDL)):
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, now.Add(timeout))
			defer cancel()
		case hasDL && ctx.Value(upstreamDeadlineKey{}) == nil:
			// The caller's deadline binds (also with no timeout of our own).
			ctx = context.WithValue(ctx, callerBoundKey{}, true)
		}
		err := invoker(ctx, method, req, reply, cc, callOpts...)
		if err != nil && status.Code(err) == codes.DeadlineExceeded {
			return o.annotate(err)
		}
		return err
	}
}

func (o *options) timeoutFor(method string) time.Duration {
	if d, ok := o.methods[method]; ok {
		return d
	}
	return o.timeout
}

func (o *options) budgetExhausted(left time.Duration) error {
	return rpcerr.New(codes.DeadlineExceeded, reason.Domain, reason.BudgetExhausted,
		"deadline budget exhausted before calling "+o.upstream,
		"upstream", o.upstream, "remainingMs", strconv.FormatInt(left.Milliseconds(), 10))
}

// annotate adds the UPSTREAM_TIMEOUT ErrorInfo to a DEADLINE_EXCEEDED error
// that has none yet.
func (o *options) annotate(err error) error {
	if rpcerr.ErrorInfo(err) != nil {
		return err
	}
	st := status.Convert(err)
	info := &errdetails.ErrorInfo{
		Domain: reason.Domain, Reason: reason.UpstreamTimeout,
		Metadata: map[string]string{"hop": o.upstream},
	}
	if d, e := st.WithDetails(info); e == nil {
		return d.Err()
	}
	return err
}

// UnaryServerInterceptor returns the server interceptor described in the
// package documentation. WithMinBudget applies.
func UnaryServerInterceptor(opts ...Option) grpc.UnaryServerInterceptor {
	o := newOptions(opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		if dl, ok := ctx.Deadline(); ok {
			if left := time.Until(dl); left < max(o.minBudget, 1) || ctx.Err() != nil {
				return nil, rpcerr.New(codes.DeadlineExceeded, reason.Domain, reason.BudgetExhausted,
					"deadline passed before "+info.FullMethod+" started",
					"method", info.FullMethod, "remainingMs", strconv.FormatInt(left.Milliseconds(), 10))
			}
		}
		return handler(ctx, req)
	}
}
