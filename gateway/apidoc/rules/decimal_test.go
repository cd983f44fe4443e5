package rules

import (
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"
)

// TestDecimalRange: the pattern matches exactly the canonical spellings of
// the integers in range, for every value near the bounds, on random ranges.
func TestDecimalRange(t *testing.T) {
	ranges := [][2]int64{{0, 0}, {0, 9}, {0, 10}, {1, 1000}, {0, 1_000_000_000}, {-5, 5}, {-1000, -10}, {7, 3},
		{0, 1_000_000_000_000_000}, {math.MinInt64, math.MaxInt64}, {1, math.MaxInt64}}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		a, b := rng.Int64N(2_000_000)-1_000_000, rng.Int64N(2_000_000)-1_000_000
		ranges = append(ranges, [2]int64{min(a, b), max(a, b)})
	}
	for _, r := range ranges {
		lo, hi := r[0], r[1]
		re := regexp.MustCompile(decimalRange(big.NewInt(lo), big.NewInt(hi)))
		probe := []int64{lo, hi, 0, 1, -1, 9, 10, 99, 100, 101, 999, 1000, 1001, math.MaxInt64, math.MinInt64}
		for _, p := range []int64{lo, hi} {
			for d := int64(-12); d <= 12; d++ {
				if v := p + d; (d < 0) == (v < p) { // skip overflow
					probe = append(probe, v)
				}
			}
		}
		for range 50 {
			probe = append(probe, rng.Int64N(4_000_000)-2_000_000)
		}
		for _, v := range probe {
			want := lo <= v && v <= hi
			if got := re.MatchString(strconv.FormatInt(v, 10)); got != want {
				t.Errorf("decimalRange(%d, %d) matches %d = %v, want %v", lo, hi, v, got, want)
			}
		}
		for _, s := range []string{"", "-", "-0", "00", "01", "+1", " 1", "1 ", "1e3"} {
			if re.MatchString(s) {
				t.Errorf("decimalRange(%d, %d) matches %q, a spelling that is not canonical", lo, hi, s)
			}
		}
	}
}
