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

	"github.com/portico-gateway/portico/interceptors/call"
	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

type upstreamDeadlineKey struct{}

// WithUpstreamDeadline marks ctx's deadline as the upstream's own budget,
// set by a layer in front of the chain rather than by a caller: the REST
// edge applies a route's configured timeout itself. Running out of such a
// deadline is the upstream's failure (breakers count it), exactly as if the
// chain's own timeout had fired. It is an input of the chain, read by this
// package's interceptor alone, which records the deadline's owner in the
// call's state (package call).
func WithUpstreamDeadline(ctx context.Context) context.Context {
	return context.WithValue(ctx, upstreamDeadlineKey{}, true)
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
		ctx, st := call.Ensure(ctx)
		switch {
		case timeout > 0 && (!hasDL || now.Add(timeout).Before(callerDL)):
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, now.Add(timeout))
			defer cancel()
			st.SetOwner(call.Upstream)
		case hasDL && ctx.Value(upstreamDeadlineKey{}) == nil:
			// The caller's deadline binds (also with no timeout of our own).
			st.SetOwner(call.Caller)
		case hasDL:
			st.SetOwner(call.Upstream) // the edge's route deadline
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
