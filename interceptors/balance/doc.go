// Package balance spreads one upstream's calls over its instances: the
// service config (load balancing policy and client health checking), a
// resolver for a static, changeable address list, and passive ejection of
// instances whose calls keep failing.
//
// # Service config
//
// ServiceConfig builds the gRPC service config JSON: loadBalancingConfig
// round_robin by default or least_request (grpc-go's
// least_request_experimental, gRFC A48, choiceCount 2), and, when enabled,
// healthCheckConfig {serviceName}. With health checking on, grpc-go opens a
// grpc.health.v1.Health/Watch stream per connection and routes only to
// instances reporting SERVING (this package imports google.golang.org/grpc/health
// to register the client side). The gateway passes it with
// grpc.WithDefaultServiceConfig and grpc.WithDisableServiceConfig, so the
// gateway's configuration, not a DNS TXT record, decides.
//
// # Addresses
//
// A Resolver feeds a list of "host:port" addresses to one ClientConn through
// grpc-go's manual resolver (target "portico:///<name>"); SetAddresses
// replaces the list while calls run, so instances are added or removed
// without a restart. A "dns:///host:port" target is resolved into such a
// list and re-resolved every DNSRefresh (30s by default) by a Refresher, so
// instances added behind the name join without waiting for a connection to
// fail, which is all grpc-go's own DNS resolver would do. A failed or empty
// lookup keeps the current list.
//
// # Ejection
//
// grpc-go's outlier detection balancer (gRFC A50,
// "outlier_detection_experimental") would be the natural wrapper around the
// policy, but in v1.85.0 it lives in google.golang.org/grpc/internal/xds and
// is registered only by importing google.golang.org/grpc/xds, which drags in
// the xDS client and Envoy protos this module does not depend on. So the
// Resolver ejects on its own, from what its interceptor sees per attempt:
//
//   - An address whose calls fail ConsecutiveFailures times in a row (the
//     codes breaker.Classify calls failures, minus calls the caller cut
//     short) is taken out of the address list for BaseTime times the number
//     of times it was ejected, at most MaxTime (Envoy's consecutive_5xx).
//   - At most MaxPercent of the addresses are out at once, and never the
//     last one: with every instance failing, the breaker, not ejection, is
//     the right tool.
//   - An ejected address returns with the first call after its time is up;
//     its ejection count resets after MaxTime without ejection.
//
// # Breakers per instance
//
// With WithBreakers every address also has a circuit breaker (package
// breaker), fed by the same interceptor with each attempt's outcome. While
// it is open the address is out of the list for the cool-down, as for a
// short ejection; then it returns and the half-open breaker judges its next
// attempts. When every address's breaker is open they all stay in the list
// and Blocked reports how long calls must wait, for the breaker layer to
// refuse them at once. Breakers act after 2 failures by default, ejection
// after 5 and for longer: the breaker takes a bad instance out within a
// call or two, ejection keeps a repeatedly bad one out.
//
// Limitations: the signal is the peer address of each call, so it works for
// addresses given as IP:port (what the connection reports), not for names
// and not for DNS targets, where only active health checking applies. A
// returning instance gets its round-robin share at once (no slow start).
//
// A Resolver is safe for concurrent use and starts no goroutines.
package balance
