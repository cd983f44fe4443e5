// Package spelling is what TestSpellingsFindsALiteral scans: two reasons
// spelled as literals, and strings that only contain or resemble one.
package spelling

const funds = "INSUFFICIENT_FUNDS"

var (
	open     = `CIRCUIT_OPEN`
	inText   = "CIRCUIT_OPEN is not a whole literal"
	lower    = "insufficient_funds"
	prefixed = "REASON_CIRCUIT_OPEN"
)

// CIRCUIT_OPEN in a comment is documentation, not a spelling.
func use() []string { return []string{funds, open, inText, lower, prefixed} }
