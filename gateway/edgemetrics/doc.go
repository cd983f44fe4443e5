// Package edgemetrics defines the edge's own Prometheus metrics:
//
//	portico_gateway_requests_total{route,method,upstream,code,problem}        counter
//	portico_gateway_request_duration_seconds{route,method,upstream,code}      histogram, trace exemplars
//	portico_gateway_requests_in_flight{route}                                  gauge
//	portico_gateway_upstream_errors_total{upstream,grpc_code}                 counter
//
// route is the OpenAPI path template ("/api/inventory/{sku}"), an
// operational path ("/health"), a problem page route, or "unmatched", never
// the raw path; method is a standard method or "OTHER"; upstream is a
// configured upstream or ""; code is the HTTP status code (or "other"), as
// promhttp's code label; problem is the problem code answered, "" for a
// success; grpc_code is a gRPC code name, as go-grpc-middleware's. Every
// label's values are a bounded set, whatever clients send. Latency buckets
// are procmetrics.Buckets (0.5 ms to 30 s), and the histograms are native
// too.
//
// Init creates at zero every series a dashboard or alert reads, for every
// route the edge serves, so they show 0, not "No data", before the first
// event: the one place a new edge series gets its zero. Metrics is safe for
// concurrent use.
package edgemetrics
