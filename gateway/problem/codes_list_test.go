package problem

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/protoadapt"

	"github.com/portico-gateway/portico/internal/rpcerr"
)

func TestCodesSortedUnique(t *testing.T) {
	cs := Codes()
	if !slices.IsSorted(cs) || len(slices.Compact(slices.Clone(cs))) != len(cs) {
		t.Errorf("Codes() = %v, want sorted without duplicates", cs)
	}
	for _, c := range cs {
		if !validCode(c) {
			t.Errorf("Codes() holds %q, not UPPER_SNAKE", c)
		}
	}
}

// TestCodesCoverStatusTable: whatever gRPC code, reason, details and Facts
// an upstream answer has, the problem's code is one of Codes(), so the
// OpenAPI enum and the /problems pages cover every answer.
func TestCodesCoverStatusTable(t *testing.T) {
	reasons := append([]string{"", "SOMETHING_NEW", "FAULT_INJECTED", "DEADLINE_BUDGET_EXHAUSTED", "lower_case"}, Codes()...)
	extras := map[string][]protoadapt.MessageV1{"none": nil, "quota": {quota()}, "retry": {retry(1)}}
	facts := []Facts{{Upstream: "order"}, {Upstream: "order", Trailer: true}, {Upstream: "order", Header: true, Trailer: true}}
	for c := codes.Code(0); c <= codes.Unauthenticated+1; c++ {
		for _, reason := range reasons {
			for name, extra := range extras {
				for _, f := range facts {
					d := extra
					if reason != "" {
						d = append([]protoadapt.MessageV1{info(reason)}, extra...)
					}
					p := FromStatus(st(c, d...), f)
					if !slices.Contains(Codes(), p.Code) {
						t.Errorf("FromStatus(%s, reason %q, %s, %+v).Code = %s, not in Codes()", rpcerr.CodeName(c), reason, name, f, p.Code)
					}
				}
			}
		}
	}
}

// validCode reports whether s is UPPER_SNAKE, 1-64 characters.
func validCode(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
