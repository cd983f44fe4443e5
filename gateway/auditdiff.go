package gateway

import (
	"fmt"
	"slices"
)

// diffCounts counts a diff's added, removed and changed lines.
func diffCounts(diff []string) (added, removed, changed int) {
	for _, d := range diff {
		switch d[0] {
		case '+':
			added++
		case '-':
			removed++
		default:
			changed++
		}
	}
	return added, removed, changed
}

// summarize bounds a diff for one log line.
func summarize(diff []string) []string {
	const max = 20
	if len(diff) <= max {
		return diff
	}
	return append(slices.Clone(diff[:max]), fmt.Sprintf("... and %d more", len(diff)-max))
}
