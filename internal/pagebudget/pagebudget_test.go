package pagebudget

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// rowBudget is what a page's rows may encode to.
const rowBudget = MaxBytes - tokenReserve

func row(n int) *wrapperspb.StringValue { return wrapperspb.String(strings.Repeat("x", n)) }

// cost is what a row of string length n takes from the budget: its field
// tag, its length and its bytes.
func cost(n int) int { return protowire.SizeTag(1) + protowire.SizeBytes(proto.Size(row(n))) }

// fill returns the string length whose row costs exactly c, or fails.
func fill(t *testing.T, c int) int {
	t.Helper()
	for n := c; n >= 0; n-- {
		if cost(n) == c {
			return n
		}
	}
	t.Fatalf("no row costs exactly %d bytes", c)
	return 0
}

func TestBudget(t *testing.T) {
	const small = 10
	tests := []struct {
		name string
		rows []int // string lengths
		want int   // rows that fit
	}{
		{"empty page", nil, 0},
		{"small rows all fit", []int{10, 10, 10}, 3},
		{"third row passes the budget", []int{400_000, 400_000, 400_000}, 2},
		{"oversized first row still fits alone", []int{2 << 20, 1}, 1},
		{"second row fills the budget exactly", []int{small, fill(t, rowBudget-cost(small))}, 2},
		{"second row passes the budget by one byte", []int{small, fill(t, rowBudget-cost(small)+1)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b Budget
			n := 0
			for n < len(tt.rows) && b.Add(row(tt.rows[n])) {
				n++
			}
			if n != tt.want {
				t.Errorf("rows that fit = %d, want %d", n, tt.want)
			}
		})
	}
}
