// Package assembled is make bench-edge's system (e): stock grpc-gateway
// with the middleware a platform team would assemble from the usual
// libraries for the features the Portico edge has, configured the
// idiomatic way, in front of the same backend (issue 28).
//
// The server's handler chain, outermost first:
//
//	otelhttp (W3C trace context, sampled out, no exporter)
//	promhttp in flight, duration and counter (code, method)
//	log/slog JSON access line per request
//	in-flight semaphore (503 problem+json when full)
//	bearer API-key authentication (401)
//	three token buckets (golang.org/x/time/rate): caller, route group,
//	global, with RateLimit-Policy / RateLimit / X-RateLimit-* headers
//	a role check per route (403)
//	grpc-gateway's ServeMux, errors as problem+json (WithErrorHandler)
//
// and the gRPC client's, outermost first: otelgrpc (stats handler), the
// route deadline (go-grpc-middleware timeout), retries (go-grpc-middleware
// retry: UNAVAILABLE, 3 attempts), Prometheus client metrics
// (go-grpc-middleware/providers/prometheus), a sony/gobreaker/v2 breaker
// and a bulkhead semaphore.
//
// The limits and caps are the edge's defaults or, for the rate limits,
// set far above what one machine offers, as bench-edge sets the edge's:
// every layer costs its decision and none refuses.
package assembled
