package problem

import (
	"slices"
	"testing"
)

func TestCodes(t *testing.T) {
	got := Codes()
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatalf("Codes() = %v, want sorted without duplicates", got)
	}
	for _, want := range []string{CodeUpstreamTimeout, CodeCircuitOpen, "ORDER_NOT_FOUND", "PAYMENT_DECLINED", CodeInvalidArgument} {
		if !slices.Contains(got, want) {
			t.Errorf("Codes() lacks %s", want)
		}
	}
	if slices.Contains(got, "UNSPECIFIED") || slices.Contains(got, "") {
		t.Errorf("Codes() = %v, carries the unspecified reason", got)
	}
}
