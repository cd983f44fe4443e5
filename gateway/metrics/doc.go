// Package metrics defines the edge's Prometheus metrics:
//
//	portico_gateway_requests_total{route,method,class}          counter, class is 2xx..5xx
//	portico_gateway_request_duration_seconds{route,method}       histogram
//	portico_gateway_upstream_errors_total{upstream,code}         counter, code is the gRPC code name
//
// route is the matched path template ("/api/orders/{id}"), an operational
// path ("/health"), or "unmatched", never the raw path, and method is one of
// the standard methods or "OTHER", so label cardinality stays bounded
// whatever clients send. Metrics is safe for concurrent use.
package metrics
