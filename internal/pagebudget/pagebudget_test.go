package pagebudget_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/portico-gateway/portico/internal/pagebudget"
)

func TestBudget(t *testing.T) {
	row := func(n int) *wrapperspb.StringValue { return wrapperspb.String(strings.Repeat("x", n)) }
	tests := []struct {
		name string
		rows []int // string lengths
		want int   // rows that fit
	}{
		{"empty page", nil, 0},
		{"small rows all fit", []int{10, 10, 10}, 3},
		{"third row passes the budget", []int{400_000, 400_000, 400_000}, 2},
		{"oversized first row still fits alone", []int{2 << 20, 1}, 1},
		{"exactly the row budget", []int{pagebudget.MaxBytes - 1024 - 8}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b pagebudget.Budget
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
