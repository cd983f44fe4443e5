package retry

import "context"

type idempotentKey struct{}

// WithIdempotent marks the call made with ctx safe to repeat, as a method
// whose descriptor says idempotency_level NO_SIDE_EFFECTS or IDEMPOTENT
// is: for a caller that knows the descriptor when the process's registry
// does not (a service loaded at run time).
func WithIdempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

func idempotent(ctx context.Context) bool {
	v, _ := ctx.Value(idempotentKey{}).(bool)
	return v
}
