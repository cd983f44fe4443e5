package deadline_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/interceptors/call"
	"github.com/portico-gateway/portico/interceptors/deadline"
)

// TestCallerBound checks who owns a call's deadline, also when the chain
// has no timeout of its own (the REST edge, whose route deadline binds):
// a deadline the edge marks with WithUpstreamDeadline is the upstream's,
// any other deadline is the caller's.
func TestCallerBound(t *testing.T) {
	tests := []struct {
		name     string
		timeout  time.Duration
		deadline time.Duration // 0: the caller sets none
		marked   bool          // WithUpstreamDeadline
		want     bool
	}{
		{"no timeout, caller's deadline", -1, time.Hour, false, true},
		{"no timeout, the edge's route deadline", -1, time.Hour, true, false},
		{"no timeout, no deadline", -1, 0, false, false},
		{"caller has less than the timeout", 2 * time.Hour, time.Hour, false, true},
		{"timeout binds", time.Hour, 2 * time.Hour, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			if tt.marked {
				ctx = deadline.WithUpstreamDeadline(ctx)
			}
			var got bool
			invoke := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				got = call.From(ctx).Owner() == call.Caller
				return nil
			}
			in := deadline.UnaryClientInterceptor(deadline.WithTimeout(tt.timeout))
			if err := in(ctx, "/a.B/C", nil, nil, nil, invoke); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("the caller owns the deadline = %v, want %v", got, tt.want)
			}
		})
	}
}
