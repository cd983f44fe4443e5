package faults

import (
	"context"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// UnaryServerInterceptor returns an interceptor that applies rules, or one
// that does nothing when rules is empty.
func UnaryServerInterceptor(rules Rules, opts ...Option) grpc.UnaryServerInterceptor {
	if len(rules) == 0 {
		return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			return handler(ctx, req)
		}
	}
	o := newOptions(opts)
	rules = append(Rules(nil), rules...)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		r, ok := o.pick(rules, info.FullMethod)
		if !ok {
			return handler(ctx, req)
		}
		if err := o.sleep(ctx, r); err != nil {
			return nil, err
		}
		if r.Code != codes.OK {
			return nil, injected(r, info.FullMethod)
		}
		return handler(ctx, req)
	}
}

// pick returns the first rule matching method, if its rate lets it apply.
func (o *options) pick(rules Rules, method string) (Rule, bool) {
	for _, r := range rules {
		if r.Method != "*" && r.Method != method {
			continue
		}
		if r.Rate >= 1 || o.rand() < r.Rate {
			return r, true
		}
		return Rule{}, false
	}
	return Rule{}, false
}

func (o *options) sleep(ctx context.Context, r Rule) error {
	if r.Delay <= 0 {
		return nil
	}
	t := time.NewTimer(r.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// injected is the error rule r makes for method. RESOURCE_EXHAUSTED carries
// a QuotaFailure, as a quota's does: without one the edge takes it for a
// message size limit.
func injected(r Rule, method string) error {
	err := rpcerr.New(r.Code, reason.Domain, reason.FaultInjected, "fault injected: "+r.String(), "method", method)
	if r.Code != codes.ResourceExhausted {
		return err
	}
	st, _ := status.FromError(err)
	if q, qerr := st.WithDetails(&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{
		Subject: method, Description: "fault injected",
	}}}); qerr == nil {
		st = q
	}
	return st.Err()
}
