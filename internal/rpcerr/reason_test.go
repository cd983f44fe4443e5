package rpcerr_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestReasons: every Reason round-trips through its name; among the
// reasons sent with a gRPC code only FAILED_PRECONDITION ones move the
// edge's HTTP status, to a 4xx; a value without a code may give any error
// status.
func TestReasons(t *testing.T) {
	values := typev1.Reason(0).Descriptor().Values()
	for i := 1; i < values.Len(); i++ {
		r := typev1.Reason(values.Get(i).Number())
		name := rpcerr.ReasonName(r)
		if got, ok := rpcerr.ParseReason(name); !ok || got != r {
			t.Errorf("ParseReason(%q) = %v, %v; want %v", name, got, ok, r)
		}
		c, s := rpcerr.ReasonCode(r), rpcerr.ReasonHTTPStatus(r)
		switch {
		case c == codes.OK:
			t.Errorf("ReasonCode(%v) = OK, want an error code or none (Unknown)", r)
		case c != codes.Unknown && s != 0 && (c != codes.FailedPrecondition || s < 400 || s > 499):
			t.Errorf("ReasonHTTPStatus(%v) = %d with code %v, want 0 or a 4xx on FAILED_PRECONDITION", r, s, c)
		case s != 0 && (s < 400 || s > 599):
			t.Errorf("ReasonHTTPStatus(%v) = %d, want 0 or an error status", r, s)
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
