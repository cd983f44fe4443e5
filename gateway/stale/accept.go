package stale

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Accept is what a request's Cache-Control allows of a stale answer
// (RFC 9111 section 5.2.1). The zero value accepts any copy the route's
// own max_stale allows.
type Accept struct {
	// Refused: the client will not take a stale answer (no-cache, or
	// max-stale=0, or a max-stale whose value does not parse).
	Refused bool
	// MaxStale, when positive, is the oldest copy the client takes
	// (max-stale=N seconds).
	MaxStale time.Duration
	// NoStore: the answer to this request must not be kept (no-store).
	NoStore bool
}

// maxDirectives bounds how many Cache-Control directives are read; the
// rest are ignored (the header size is bounded before this).
const maxDirectives = 32

// ParseAccept reads the request's Cache-Control header lines.
func ParseAccept(h http.Header) Accept {
	var a Accept
	n := 0
	for _, line := range h.Values("Cache-Control") {
		for d := range strings.SplitSeq(line, ",") {
			if n++; n > maxDirectives {
				return a
			}
			a.directive(strings.TrimSpace(d))
		}
	}
	return a
}

func (a *Accept) directive(d string) {
	name, arg, hasArg := strings.Cut(d, "=")
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "no-cache":
		a.Refused = true
	case "no-store":
		a.NoStore = true
	case "max-stale":
		if !hasArg { // any staleness: the route's max_stale decides
			return
		}
		// RFC 9111 section 1.2.2: delta-seconds; a quoted form is read too
		// (section 5.2: recipients accept both).
		secs, err := strconv.ParseUint(strings.Trim(strings.TrimSpace(arg), `"`), 10, 31)
		switch {
		case err != nil && isDigits(strings.Trim(strings.TrimSpace(arg), `"`)):
			// Larger than 2^31-1: section 1.2.2 reads it as 2^31.
			secs = 1 << 31
		case err != nil, secs == 0:
			a.Refused = true
			return
		}
		if d := time.Duration(secs) * time.Second; a.MaxStale == 0 || d < a.MaxStale {
			a.MaxStale = d
		}
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Allows reports whether a copy of age may be answered: not refused, and
// within the client's max-stale. A copy's whole age is its staleness, as
// the edge's answers are never fresh (no-store).
func (a Accept) Allows(age time.Duration) bool {
	return !a.Refused && (a.MaxStale == 0 || age <= a.MaxStale)
}
