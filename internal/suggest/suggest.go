// Package suggest finds the name a person most likely meant when they
// typed one that does not exist: an unknown command or config key gets a
// "did you mean ...?".
//
// A candidate is close when its edit distance (Levenshtein, ignoring case)
// to the typed name is at most MaxDistance, as cobra and git judge it, or
// when the typed name is a prefix of it of at least 3 characters. The
// closest candidate wins; ties go to the earlier one.
package suggest

import "strings"

// MaxDistance is the largest edit distance a suggestion may have.
const MaxDistance = 2

// Closest returns the candidate closest to name, or "" when none is close.
func Closest(name string, candidates []string) string {
	best, bestD := "", MaxDistance+1
	lower := strings.ToLower(name)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := distance(lower, lc)
		if d > MaxDistance && len(lower) >= 3 && strings.HasPrefix(lc, lower) {
			d = MaxDistance
		}
		if d < bestD && lc != lower {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean returns "; did you mean X?" for Closest's answer, or "".
func DidYouMean(name string, candidates []string) string {
	if c := Closest(name, candidates); c != "" {
		return "; did you mean " + c + "?"
	}
	return ""
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
