// Package trend keeps a bounded, in-memory history of the edge's traffic,
// sampled from the process's own Prometheus registry (Gather, no
// Prometheus server): for each upstream, one Point per Step (request rate,
// the ratio of 5xx answers, p99 latency), and for each rate-limit layer
// its refusals. The admin console draws the points as sparklines beside
// the same minutes an hour (or a day) earlier.
//
// Memory is bounded: at most MaxUpstreams upstreams, each with at most
// Keep points of 24 bytes (9,000 points, 25 hours at one per 10 s: about
// 216 KB per upstream, 13.8 MB for 64), plus Window/Step+1 cumulative
// snapshots for the summaries. An upstream beyond MaxUpstreams is not
// recorded.
//
// Record samples once per Step until its context ends; Sample takes one
// sample (tests call it with their own clock). A Recorder is safe for
// concurrent use.
package trend
