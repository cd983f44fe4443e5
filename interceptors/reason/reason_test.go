package reason_test

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func TestOf(t *testing.T) {
	tests := []struct {
		err   error
		want  string
		local bool
	}{
		{nil, "", false},
		{fmt.Errorf("plain"), "", false},
		{status.Error(codes.Unavailable, "no details"), "", false},
		{rpcerr.New(codes.Unavailable, reason.Domain, reason.CircuitOpen, "open"), reason.CircuitOpen, true},
		{rpcerr.New(codes.Unavailable, reason.Domain, reason.Overloaded, "full"), reason.Overloaded, true},
		{rpcerr.New(codes.DeadlineExceeded, reason.Domain, reason.BudgetExhausted, "late"), reason.BudgetExhausted, true},
		{rpcerr.New(codes.DeadlineExceeded, reason.Domain, reason.UpstreamTimeout, "slow"), reason.UpstreamTimeout, false},
		{rpcerr.New(codes.Unavailable, "order.portico.dev", reason.CircuitOpen, "another domain"), "", false},
		{fmt.Errorf("wrapped: %w", rpcerr.New(codes.Unavailable, reason.Domain, reason.Overloaded, "full")), reason.Overloaded, true},
	}
	for _, tt := range tests {
		if got := reason.Of(tt.err); got != tt.want {
			t.Errorf("Of(%v) = %q, want %q", tt.err, got, tt.want)
		}
		if got := reason.LocalFastFail(tt.err); got != tt.local {
			t.Errorf("LocalFastFail(%v) = %v, want %v", tt.err, got, tt.local)
		}
	}
}

func TestDeliberate(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"live upstream's reason", rpcerr.New(codes.Unavailable, "order.portico.dev", "INVENTORY_UNAVAILABLE", "x"), true},
		{"deeper hop's breaker", rpcerr.New(codes.Unavailable, reason.Domain, reason.CircuitOpen, "x"), true},
		{"injected fault imitates a bare failure", rpcerr.New(codes.Unavailable, reason.Domain, reason.FaultInjected, "x"), false},
		{"bare UNAVAILABLE (connection refused)", status.Error(codes.Unavailable, "connection refused"), false},
		{"other code with a reason", rpcerr.New(codes.FailedPrecondition, "d", "R", "x"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reason.Deliberate(tt.err); got != tt.want {
				t.Errorf("Deliberate(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestReasonsAreEnumValues: every reason the interceptors send is a
// portico.type.v1.Reason, the one list of reasons.
func TestReasonsAreEnumValues(t *testing.T) {
	for _, r := range []string{reason.BudgetExhausted, reason.UpstreamTimeout, reason.CircuitOpen, reason.Overloaded, reason.FaultInjected} {
		if _, ok := rpcerr.ParseReason(r); !ok || r == "" {
			t.Errorf("reason %q is not a portico.type.v1.Reason", r)
		}
	}
}
