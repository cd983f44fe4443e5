package rules_test

import (
	"math/rand/v2"
	"regexp/syntax"
	"strings"
)

// regexGen writes strings that a regular expression matches, choosing each
// repeat count near the bounds the caller gives (a schema's lengths), so
// generated values sit at the edges as often as in the middle.
type regexGen struct {
	rng      *rand.Rand
	min, max int // preferred repeat counts for * and +
}

func (g regexGen) gen(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	g.walk(&b, re.Simplify())
	return b.String(), true
}

func (g regexGen) walk(b *strings.Builder, re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		b.WriteRune(g.inClass(re.Rune))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteRune(rune('a' + g.rng.IntN(26)))
	case syntax.OpCapture:
		g.walk(b, re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			g.walk(b, s)
		}
	case syntax.OpAlternate:
		g.walk(b, re.Sub[g.rng.IntN(len(re.Sub))])
	case syntax.OpQuest:
		if g.rng.IntN(2) == 0 {
			g.walk(b, re.Sub[0])
		}
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		lo, hi := 0, g.max
		if re.Op == syntax.OpPlus {
			lo = 1
		}
		if re.Op == syntax.OpRepeat {
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = max(lo, g.max)
			}
		}
		n := g.count(lo, hi)
		for range n {
			g.walk(b, re.Sub[0])
		}
	}
}

// count picks a repeat count in [lo, hi]: a bound, next to a bound, or any.
func (g regexGen) count(lo, hi int) int {
	if hi < lo {
		hi = lo
	}
	c := []int{lo, hi, g.min, g.max, g.min + 1, g.max - 1, lo + g.rng.IntN(hi-lo+1)}
	n := c[g.rng.IntN(len(c))]
	return min(max(n, lo), hi)
}

func (g regexGen) inClass(ranges []rune) rune {
	if len(ranges) == 0 {
		return 'x'
	}
	i := g.rng.IntN(len(ranges)/2) * 2
	lo, hi := ranges[i], ranges[i+1]
	if hi-lo > 0x2000 {
		hi = lo + 0x2000
	}
	return lo + rune(g.rng.Int64N(int64(hi-lo)+1))
}
