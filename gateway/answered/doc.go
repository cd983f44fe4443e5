// Package answered tells apart what an upstream actually sent from what the
// gRPC client made up, which is what separates 502 (nothing answered) from
// 503 (a live upstream answered UNAVAILABLE) at the edge.
//
// The edge puts a Record in each request's context (NewContext) before the
// upstream call. StatsHandler, installed on the upstream connection with
// grpc.WithStatsHandler, marks the Record when response headers
// (stats.InHeader) or the status trailers (stats.InTrailer, also sent alone
// as a trailers-only answer) arrive from the wire. grpc-go emits neither for
// errors it makes up locally: refused connections, name resolution failures,
// deadlines that fire before an answer, client-side message size limits,
// and fast failures of client interceptors such as a circuit breaker.
//
// Begin marks that the call reached the client at all (stats.Begin), so an
// error returned before any call (request binding in the generated handler)
// can be told apart from the upstream's.
//
// With retries every attempt marks the same Record: it answers "did any
// attempt get an answer". A connection without StatsHandler never marks a
// Record, so every failure through it looks unanswered; the edge's default
// dialer always installs it. A Record is safe for concurrent use.
package answered
