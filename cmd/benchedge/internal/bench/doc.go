// Package bench is benchedge's harness: it builds the binaries, starts the
// system under test as real processes on free loopback ports, pins it
// alone to one CPU with GOMAXPROCS=1 (the load generator and the backend
// share the other CPU), drives it with a load generator and reports
// figures as JSON and a markdown table.
//
// edge (make bench-edge) puts (a) direct gRPC to the in-memory backend,
// (b) stock grpc-gateway with its default mux and no middleware, (c)
// vanguard-go, (d) the Portico edge in production shape (auth, breaker,
// retries, bulkhead, metrics, in-flight cap, access log to a file), (d0)
// the edge with what its config can turn off turned off, (dd) (d) with
// the built-in upstreams on the descriptor path (services + descriptors:
// a FileDescriptorSet) and (e) stock grpc-gateway with the middleware a
// team would assemble for the same features (package assembled), side by
// side: an equivalence check of the answers first ((dd) and (e) against
// (d): good, 401, 403 and upstream-error answers, status, media type,
// body and quota headers), the RSS per idle keep-alive connection of (b),
// (d) and (e) (5,000 connections, each after one request) and of net/http
// alone (`benchedge floor`, started as they are), then interleaved
// closed-loop rounds (c=64) with CPU per request from /proc and validity
// gates (no non-2xx, SUT at least 90% busy, steal under 5%; a failing
// round is marked, never dropped), serial latency (c=1), CreateOrder
// (POST /api/orders) on (d) and (dd) in interleaved rounds of half a
// round, and an open-loop phase at half stock's throughput. It writes
// JSON, a markdown table of ratios and an SVG chart.
//
// overload (issue 10, load shedding) measures the edge's closed-loop
// capacity for GET /api/inventory/{sku} against the real inventory
// service, then offers open-loop load (vegeta, pinned in tools/go.mod) at
// a low rate and at 1x, 2x and 4x that capacity (the lean generator of
// `benchedge load`, or vegeta), and reports per rate the goodput (2xx a
// second), the admitted (2xx) p50/p99, the shed (503) p99, the edge's CPU
// per request from /proc, the goodput the refusal's cost allows at the
// rate sent (the bound) and the goodput over it; a rate the generator
// sent under 95% of is flagged: it is not measured at its multiple. Two
// references frame the refusal's cost: shed-only (the cap held full, closed loop: every answer
// a 503) and the net/http floor (`benchedge floor`, a bare net/http server
// with the edge's timeouts answering a prebuilt 503 of the same shape, on
// the edge's CPU). Each phase also reports the load CPU's busy share (the
// generator's and the backend's CPU time over the phase): near 1, the
// generator and the backend, not the edge, are what saturates. A run whose
// capacity phase finds the edge under 90% busy is marked invalid (the
// edge did not have its CPU to itself), as bench-edge marks its rounds.
//
// The harness only sends load to loopback, and every phase is bounded in
// time; the processes it starts are stopped when it returns.
package bench
