package rules

import (
	"fmt"
	"math/big"
	"strings"
)

// decimalRange is a regular expression that matches exactly the canonical
// decimal spellings (no sign for non-negative values, no leading zeros, no
// "-0") of the integers from lo to hi inclusive; it matches nothing when
// lo > hi.
func decimalRange(lo, hi *big.Int) string {
	var alts []string
	zero := new(big.Int)
	if hi.Sign() >= 0 {
		a := lo
		if a.Sign() < 0 {
			a = zero
		}
		alts = append(alts, unsignedRange(a, hi)...)
	}
	if lo.Sign() < 0 {
		// Negative values are "-" and a magnitude from max(-hi, 1) to -lo.
		a := new(big.Int).Neg(hi)
		if a.Sign() < 1 {
			a = big.NewInt(1)
		}
		if neg := unsignedRange(a, new(big.Int).Neg(lo)); len(neg) > 0 {
			alts = append(alts, "-(?:"+strings.Join(neg, "|")+")")
		}
	}
	if len(alts) == 0 {
		return "^[^\\s\\S]$" // matches nothing
	}
	return "^(?:" + strings.Join(alts, "|") + ")$"
}

// unsignedRange returns alternatives matching the integers a..b (a, b >=
// 0), one group per digit count.
func unsignedRange(a, b *big.Int) []string {
	if a.Cmp(b) > 0 {
		return nil
	}
	var out []string
	for l := len(a.String()); l <= len(b.String()); l++ {
		first, last := pow10(l-1), new(big.Int).Sub(pow10(l), big.NewInt(1))
		if l == 1 {
			first = new(big.Int)
		}
		if a.Cmp(first) > 0 {
			first = a
		}
		if b.Cmp(last) < 0 {
			last = b
		}
		out = append(out, sameLength(first.String(), last.String())...)
	}
	return out
}

// sameLength returns alternatives matching the decimal strings from x to y,
// both of the same length, x <= y.
func sameLength(x, y string) []string {
	if x == y {
		return []string{x}
	}
	if len(x) == 1 {
		return []string{digits(x[0], y[0])}
	}
	if x[0] == y[0] {
		rest := sameLength(x[1:], y[1:])
		for i := range rest {
			rest[i] = x[:1] + rest[i]
		}
		return rest
	}
	n := len(x) - 1
	var out []string
	lo, hi := x[0], y[0]
	if strings.Trim(x[1:], "0") != "" {
		for _, r := range sameLength(x[1:], strings.Repeat("9", n)) {
			out = append(out, x[:1]+r)
		}
		lo++
	}
	var tail []string
	if strings.Trim(y[1:], "9") != "" {
		for _, r := range sameLength(strings.Repeat("0", n), y[1:]) {
			tail = append(tail, y[:1]+r)
		}
		hi--
	}
	if lo <= hi {
		out = append(out, fmt.Sprintf("%s[0-9]{%d}", digits(lo, hi), n))
	}
	return append(out, tail...)
}

func digits(a, b byte) string {
	if a == b {
		return string(a)
	}
	return fmt.Sprintf("[%c-%c]", a, b)
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}
