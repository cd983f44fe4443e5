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
// Dependencies are reported in the order given. A Checker is immutable and
// safe for concurrent use; Check starts one goroutine per dependency and
// waits for all of them before returning.
package health
