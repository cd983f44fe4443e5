// Package gateway is Portico's REST/JSON edge: one HTTP entry point in front
// of the gRPC services, built on grpc-gateway's generated handlers.
//
// # Use
//
// Load a config.Config (config.Load with CheckRoutes for a YAML file,
// config.Dev for portico dev), build a Server with New, and call Serve
// until its context ends:
//
//	cfg, err := config.Load("deploy/portico.example.yaml", gateway.CheckRoutes)
//	srv, err := gateway.New(ctx, cfg, gateway.WithDialer(dial))
//	err = srv.Serve(ctx, listener)
//
// New validates the whole config against the route table (every override
// key selects a route, no route twice, timeouts within their maximum,
// upstream names match the registration list) and builds the first
// snapshot (snapshot.go): everything made from config (route table,
// authenticator, limits, one connection per upstream through the DialFunc,
// default Dial without the client chain). The edge process passes
// WithUpstreams, whose Dialer builds each upstream's client resilience
// chain with NewUpstream from config.UpstreamConfig.Chain(). /health dials each
// upstream a second time with plain Dial, so health checks cannot trip a
// breaker and an open breaker cannot report a live upstream DOWN.
//
// # Reload
//
// Reload (a Config), ReloadFile (the file again) and Rollback (a kept
// version) build a new snapshot and swap it in atomically; a request uses
// the snapshot it started with. Unchanged upstreams keep their
// connection; replaced ones close once drained. Every setting reloads:
// the identity signer and the TLS settings are snapshot fields too, and
// the listeners and HTTP servers follow listen, admin_listen and the http
// section (listeners.go). Each change is versioned,
// audited and counted (reload.go). A new component built from config
// joins reload by being a field of snapshot, set in build: build is the
// one place config becomes runtime objects. The admin API (admin.go) shows
// the live state on its own listener. deploy/portico.example.yaml is the
// configuration reference; every zero field means its default (package
// gateway/config).
//
// # Pipeline
//
// Every request runs through these steps in order; each rejection happens
// before any upstream call:
//
//	shed         503 OVERLOADED + Retry-After over the in-flight caps (shed
//	             section, shedding.go): /api only, before the body is read
//	             and before the config snapshot is acquired, with no access
//	             line (one "shedding load" line a second)
//	trace id     a valid W3C traceparent wins, else X-Trace-Id, else a new id (trace.go)
//	trace        the server span: a valid W3C traceparent (and tracestate) is
//	             continued, else X-Trace-Id names the trace, else a new one;
//	             the edge decides sampling; traceparent on the answer (trace.go)
//	header size  431 over http.max_header_bytes
//	CORS         preflights answered, 204 or 403, before any credential (cors.go)
//	ops          /health, /healthz/live, /healthz/ready, /openapi.json,
//	             /problems and /problems/{slug} (problems.go), /docs and
//	             /docs/{file} (the API reference, reference.go): GET and
//	             HEAD, no token; /metrics needs the admin role (ops.go)
//	authenticate 400, 401 (package auth's Chain: API key, JWT or signed app; authn.go)
//	route        404, 405 + Allow (package route)
//	authorize    403: the policy, the caller's roles x the route (package auth)
//	prepare      Idempotency-Key, Grpc-Timeout, query, body size and encoding:
//	             400, 413, 415
//	forward      grpc-gateway's handler, bounded by the route's deadline; it
//	             parses the JSON body once (package jsonwire)
//	normalize    201 + Location for creates, enum names, problem+json errors
//
// Errors are RFC 9457 problems through package problem's one status table.
// One JSON access line is logged per request (never its headers) and
// counted in /metrics; a 5xx is logged at ERROR, except a 504 under the
// client's own shorter Grpc-Timeout, which is the client's outcome (WARN,
// like every 4xx).
//
// # Adding a proto service
//
//  1. Add the google.api.http options to the proto, and for every RPC the
//     edge adds to, the (portico.api.v1.edge) option of
//     proto/portico/api/v1/edge.proto: summary, a Location template for
//     a create (201), a required Idempotency-Key, the problem statuses the
//     RPC's reasons cause. Run make generate.
//  2. Add one line to registrations in routes.go: the upstream name, the
//     service's full name and the generated RegisterXxxHandler.
//  3. Add the upstream to the config. Nothing else names the RPC: the edge
//     and the OpenAPI document both read the options (package protoopt).
//
// # Concurrency
//
// A Server is safe for concurrent use; its only goroutines are net/http's
// and, during /health, one per upstream check, all finished when Serve
// returns. Reloads run one at a time.
package gateway
