// Package bench is benchedge's harness: it builds the binaries, starts the
// system under test as real processes on free loopback ports, pins it
// alone to one CPU with GOMAXPROCS=1 (the load generator and the backend
// share the other CPU), drives it with a load generator and reports
// figures as JSON and a markdown table.
//
// overload (issue 10, load shedding) measures the edge's closed-loop
// capacity for GET /api/inventory/{sku} against the real inventory
// service, then offers open-loop load (vegeta, pinned in tools/go.mod) at
// a low rate and at 1x, 2x and 4x that capacity, and reports per rate the
// goodput (2xx a second), the admitted (2xx) p50/p99, the shed (503) p99
// and the edge's CPU per request from /proc.
//
// The harness only sends load to loopback, and every phase is bounded in
// time; the processes it starts are stopped when it returns.
package bench
