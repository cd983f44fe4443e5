// Package faults injects delays and errors into a server's handlers, so the
// timeouts, retries and breakers in front of it can be watched doing their
// job (for example: make the order service take 350ms and watch the
// edge's 240ms timeout and its breaker react).
//
// It is off unless configured: with no rules UnaryServerInterceptor passes
// every call straight through. A Rule picks calls by full method name
// ("/portico.order.v1.OrderService/CreateOrder") or "*", and for a share of
// them (Rate, 0..1) first waits Delay, then fails with Code. A rule with
// Rate 1 applies to every matching call, deterministically; the first
// matching rule wins.
//
// Rules come from a flag string, comma-separated key=value pairs, rules
// separated by ";":
//
//	--faults "delay=350ms,method=/portico.order.v1.OrderService/CreateOrder"
//	--faults "code=UNAVAILABLE,rate=0.5"
//
// Keys: method (default "*"), delay (a time.Duration, default 0), code (a
// gRPC code name such as UNAVAILABLE, default none: delay only), rate
// (default 1). Injected errors carry ErrorInfo reason FAULT_INJECTED
// (metadata "method") so nobody mistakes a drill for an outage. A delay ends
// early, with the context's error, when the caller gives up.
//
// Defaults: math/rand/v2 for the rate, time.Timer for delays. Safe for
// concurrent use; no goroutines.
package faults
