package deadline_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
				got = deadline.CallerBound(ctx)
				return nil
			}
			in := deadline.UnaryClientInterceptor(deadline.WithTimeout(tt.timeout))
			if err := in(ctx, "/a.B/C", nil, nil, nil, invoke); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("CallerBound = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAttemptTimeoutIsTheUpstreams: an attempt that runs out of its own
// per-attempt timeout (WithAttemptTimeout), earlier than the caller's
// deadline, failed for the instance's slowness, even where the caller's
// deadline binds the call; an attempt whose timeout is no earlier than the
// caller's deadline ran out of the caller's time.
func TestAttemptTimeoutIsTheUpstreams(t *testing.T) {
	expired := status.Error(codes.DeadlineExceeded, "context deadline exceeded")
	tests := []struct {
		name    string
		attempt time.Duration
		want    bool // CallerCaused
	}{
		{"attempt timeout first", time.Minute, false},
		{"caller's deadline first", 2 * time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			var got bool
			invoke := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				actx, cancel := deadline.WithAttemptTimeout(ctx, tt.attempt)
				defer cancel()
				got = deadline.CallerCaused(actx, expired)
				return nil
			}
			in := deadline.UnaryClientInterceptor(deadline.WithTimeout(-1))
			if err := in(ctx, "/a.B/C", nil, nil, nil, invoke); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("CallerCaused(attempt of %v under the caller's hour) = %v, want %v", tt.attempt, got, tt.want)
			}
		})
	}
}
