// Package prefer parses RFC 7240's Prefer header field and carries the one
// preference Portico honours, respond-async, between the edge and a
// service.
//
// Parse reads every Prefer field line of a request as one list
// (RFC 9110 section 5.3): each element is a preference token, an optional
// "=value" (a token or a quoted-string) and ";"-separated parameters.
// Names compare case-insensitively; when a preference appears twice only the
// first counts (RFC 7240 section 2); unknown preferences are kept and the
// caller ignores them. Input is bounded: at most MaxBytes bytes over all
// lines and MaxPreferences list elements, else ErrTooLong; a value that does
// not follow the grammar is ErrMalformed. Both mean a 400 at the edge.
//
// Flag, not Has, says whether a preference defined without a value (such
// as respond-async) applies: sent with a value ("respond-async=false") it
// does not.
//
// Over gRPC the preference travels as the metadata MetadataKey ("prefer"),
// and a service that applied it answers the header metadata AppliedKey
// ("preference-applied"), both holding RespondAsync. Everything here is
// pure and safe for concurrent use.
package prefer
