package retry_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/call"
	"github.com/portico-gateway/portico/interceptors/deadline"
	"github.com/portico-gateway/portico/interceptors/retry"
)

// TestAttemptTimeoutIsTheUpstreams: an attempt that runs out of its own
// per-attempt timeout, earlier than the caller's deadline, failed for the
// instance's slowness, even where the caller's deadline binds the call; an
// attempt whose timeout is no earlier than the caller's deadline ran out
// of the caller's time. Once the attempt returns, the caller owns the
// call's deadline again (what the breaker above judges by).
func TestAttemptTimeoutIsTheUpstreams(t *testing.T) {
	expired := status.Error(codes.DeadlineExceeded, "context deadline exceeded")
	tests := []struct {
		name    string
		attempt time.Duration
		want    bool // CallerCaused during the attempt
	}{
		{"attempt timeout first", time.Minute, false},
		{"caller's deadline first", 2 * time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			var during, after bool
			final := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				during = call.CallerCaused(ctx, expired)
				return nil
			}
			rty := retry.UnaryClientInterceptor(retry.WithAttemptTimeout(tt.attempt))
			viaRetry := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
				err := rty(ctx, method, req, reply, cc, final, opts...)
				after = call.CallerCaused(ctx, expired)
				return err
			}
			in := deadline.UnaryClientInterceptor(deadline.WithTimeout(-1))
			if err := in(ctx, "/a.B/C", nil, nil, nil, viaRetry); err != nil {
				t.Fatal(err)
			}
			if during != tt.want {
				t.Errorf("CallerCaused(attempt of %v under the caller's hour) = %v, want %v", tt.attempt, during, tt.want)
			}
			if !after {
				t.Errorf("CallerCaused(the call, after the attempt) = false, want true: the caller's deadline binds the call")
			}
		})
	}
}

// TestAttemptNumbers: each attempt finds its number, from 1, in the
// call's state.
func TestAttemptNumbers(t *testing.T) {
	var got []int
	final := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		got = append(got, call.From(ctx).Attempt())
		return status.Error(codes.Unavailable, "down")
	}
	rty := retry.UnaryClientInterceptor(retry.WithMaxAttempts(3), retry.WithBackoff(time.Nanosecond, time.Nanosecond),
		retry.WithRand(func() float64 { return 0 }))
	ctx := call.NewContext(context.Background(), new(call.State))
	_ = rty(ctx, "/portico.inventory.v1.InventoryService/GetItem", nil, nil, nil, final)
	if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Errorf("attempt numbers = %v, want [1 2 3]", got)
	}
}
