package rpcerr_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestReasons: every Reason has a gRPC code, round-trips through its name,
// and only FAILED_PRECONDITION reasons move the edge's HTTP status.
func TestReasons(t *testing.T) {
	values := typev1.Reason(0).Descriptor().Values()
	for i := 1; i < values.Len(); i++ {
		r := typev1.Reason(values.Get(i).Number())
		name := rpcerr.ReasonName(r)
		if got, ok := rpcerr.ParseReason(name); !ok || got != r {
			t.Errorf("ParseReason(%q) = %v, %v; want %v", name, got, ok, r)
		}
		c := rpcerr.ReasonCode(r)
		if c == codes.Unknown || c == codes.OK {
			t.Errorf("ReasonCode(%v) = %v, want a grpc_code option", r, c)
		}
		if s := rpcerr.ReasonHTTPStatus(r); s != 0 && (c != codes.FailedPrecondition || s < 400 || s > 499) {
			t.Errorf("ReasonHTTPStatus(%v) = %d with code %v, want 0 or a 4xx on FAILED_PRECONDITION", r, s, c)
		}
	}
}

func TestParseReasonUnknown(t *testing.T) {
	for _, s := range []string{"", "UNSPECIFIED", "NO_SUCH_REASON", "insufficient_stock"} {
		if r, ok := rpcerr.ParseReason(s); ok {
			t.Errorf("ParseReason(%q) = %v, want not found", s, r)
		}
	}
}

func TestFail(t *testing.T) {
	err := rpcerr.Fail("inventory.portico.dev", typev1.Reason_REASON_INSUFFICIENT_STOCK, "not enough", "sku", "a")
	info := rpcerr.ErrorInfo(err)
	if status.Code(err) != codes.FailedPrecondition || info.GetReason() != "INSUFFICIENT_STOCK" ||
		info.GetDomain() != "inventory.portico.dev" || info.GetMetadata()["sku"] != "a" {
		t.Errorf("Fail() = %v %v, want FAILED_PRECONDITION INSUFFICIENT_STOCK with sku", err, info)
	}
}
