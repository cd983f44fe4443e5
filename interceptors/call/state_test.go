package call_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/call"
)

// TestNilState: a call made outside a chain has no state; reading it
// gives the zero values and writing it does nothing.
func TestNilState(t *testing.T) {
	s := call.From(context.Background())
	if s != nil {
		t.Fatalf("From(Background) = %v, want nil", s)
	}
	s.SetOwner(call.Caller)
	s.SetAttempt(2)
	s.SetInstance("10.0.0.1:1", true)
	if o, n := s.Owner(), s.Attempt(); o != call.NoOwner || n != 0 {
		t.Errorf("nil state: Owner, Attempt = %v, %d, want none, 0", o, n)
	}
	if addr, judged := s.Instance(); addr != "" || judged {
		t.Errorf("nil state: Instance = %q, %v, want \"\", false", addr, judged)
	}
}

// TestEnsure: Ensure keeps the call's state when it has one, so layers
// chained by hand share the chain top's state, and adds one otherwise.
func TestEnsure(t *testing.T) {
	top := new(call.State)
	ctx := call.NewContext(context.Background(), top)
	if got, s := call.Ensure(ctx); s != top || got != ctx {
		t.Errorf("Ensure(ctx with a state) made another: %p, want %p", s, top)
	}
	ctx, s := call.Ensure(context.Background())
	if s == nil || call.From(ctx) != s {
		t.Errorf("Ensure(Background) = %p, From = %p: want one new state in the context", s, call.From(ctx))
	}
}

func TestCallerCaused(t *testing.T) {
	expired := status.Error(codes.DeadlineExceeded, "deadline exceeded")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	past, cancelPast := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancelPast()
	owned := func(ctx context.Context, o call.Owner) context.Context {
		s := new(call.State)
		s.SetOwner(o)
		return call.NewContext(ctx, s)
	}
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"no error", owned(past, call.Caller), nil, false},
		{"the caller cancelled", cancelled, status.Error(codes.Canceled, "canceled"), true},
		{"the caller's deadline ran out", owned(past, call.Caller), expired, true},
		{"the server said DEADLINE_EXCEEDED under the caller's deadline", owned(context.Background(), call.Caller), expired, true},
		{"the caller's deadline, another error", owned(context.Background(), call.Caller), errors.New("unavailable"), false},
		{"the upstream's deadline ran out", owned(past, call.Upstream), expired, false},
		{"no state", past, expired, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := call.CallerCaused(tt.ctx, tt.err); got != tt.want {
				t.Errorf("CallerCaused(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
