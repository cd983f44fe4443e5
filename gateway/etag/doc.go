// Package etag parses and compares HTTP entity tags (RFC 9110 section 8.8.3)
// and the If-Match and If-None-Match fields that carry lists of them
// (sections 13.1.1 and 13.1.2), for the edge's conditional requests.
//
// A Tag is one entity tag: an opaque string and whether it is weak (W/).
// Parse reads one header field's values as a Condition: "*", or a list of
// tags; anything else is ErrMalformed, which the edge answers 400. Input is
// bounded: MaxBytes of values in all and MaxTags tags, past which Parse
// returns ErrTooLong or ErrTooMany (also 400), so a client cannot make the
// edge keep or compare an unbounded list.
//
// Comparison follows section 8.8.3.2: Strong (used by If-Match) matches
// two tags only when neither is weak and their opaque strings are equal;
// Weak (used by If-None-Match) ignores the W/ prefixes. Condition's
// MatchStrong and MatchWeak apply them to a list; "*" matches any current
// representation.
//
// Everything here is a pure function of its input and safe for concurrent
// use.
package etag
