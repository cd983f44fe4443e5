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

// TestSize: 0 gets the default, a size above the cap gets the cap.
func TestSize(t *testing.T) {
	for _, c := range [][2]int{{0, 20}, {7, 7}, {100, 100}, {101, 100}} {
		if got := Size(int32(c[0]), 20, 100); got != c[1] {
			t.Errorf("Size(%d, 20, 100) = %d, want %d", c[0], got, c[1])
		}
	}
}

func TestFill(t *testing.T) {
	tests := []struct {
		name     string
		rows     []int // string lengths
		size     int
		wantRows int
		wantMore bool
	}{
		{"no rows", nil, 3, 0, false},
		{"fewer rows than the size", []int{1, 1}, 3, 2, false},
		{"one row more than the size", []int{1, 1, 1, 1}, 3, 3, true},
		{"byte budget ends the page first", []int{600_000, 600_000, 1}, 3, 1, true},
		{"oversized row alone", []int{2 << 20}, 3, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, more := Fill(tt.rows, tt.size, row)
			if len(page) != tt.wantRows || more != tt.wantMore {
				t.Errorf("Fill(%v, %d) = %d rows, more %v; want %d, %v", tt.rows, tt.size, len(page), more, tt.wantRows, tt.wantMore)
			}
			for i, m := range page {
				if len(m.GetValue()) != tt.rows[i] {
					t.Errorf("Fill row %d has %d bytes, want %d (rows in order)", i, len(m.GetValue()), tt.rows[i])
				}
			}
		})
	}
}
