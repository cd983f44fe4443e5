// Package health aggregates the edge's view of its upstreams for GET
// /health.
//
// Check asks every dependency's grpc.health.v1 Health/Check in parallel,
// each bounded by the checker's timeout (default 300ms, so /health answers
// quickly even when an upstream hangs). SERVING is UP; any other status, an
// error or the timeout is DOWN. The edge is UP when every dependency is UP,
// DEGRADED otherwise:
//
//	{"status":"UP","service":"api-gateway","dependencies":[{"name":"inventory","status":"UP"}, ...]}
//
// Dependencies are reported in the order given.
//
// A round of checks serves every caller for DefaultMaxAge (1s) after it
// ends, and callers that arrive while one is under way wait for it
// (single flight), so however many callers there are, a Checker runs at
// most one round at a time (one check per dependency in flight) and
// starts at most one a second. Each caller gets its own copy of the
// report.
//
// A Checker is safe for concurrent use; a round starts one goroutine per
// dependency and waits for all of them before returning.
package health
