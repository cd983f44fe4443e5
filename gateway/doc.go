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
// This is the one description of the edge's pipeline (the README and
// docs/architecture.md link here; TestPipelineDoc checks the order against
// serveHTTP and serveAPI). Every request runs through these steps in
// order; each refusal happens before any upstream call:
//
//	shed           503 OVERLOADED + Retry-After over the edge-wide in-flight
//	               caps (shedding.go): /api only, before the snapshot, the
//	               body and the credential, with no access line
//	snapshot       the one config this request sees, whatever reloads
//	               meanwhile (snapshot.go)
//	trace          the server span: a valid W3C traceparent is continued,
//	               else X-Trace-Id names the trace, else a new one; X-Trace-Id
//	               and traceparent on every answer (trace.go)
//	header size    431 over http.max_header_bytes
//	CORS           preflights answered, 204 or 403, before any credential (cors.go)
//	ops            /health, /healthz/live, /healthz/ready, /openapi.json,
//	               /metrics (admin role) (ops.go), /problems and
//	               /problems/{slug} (problems.go), /docs (reference.go)
//	match          the route, which labels what follows (metrics, access
//	               line); its 404 or 405 waits for authentication (package route)
//	body           read whole within routes.max_body_bytes, http.body_timeout
//	               and http.min_body_rate: 408, 429 per client address (admission.go)
//	authenticate   the credential (package auth's Chain: API key, JWT or
//	               signed app; a stream ticket in the query, for
//	               EventSource: tickets.go; authn.go)
//	rate limits    429 + RateLimit headers, counted with authentication's
//	               outcome, failed ones included (limits.go)
//	unauthorized   400 or 401 for a credential that failed
//	stream ticket  POST /api/stream-tickets issues a ticket to the caller (tickets.go)
//	not routed     404, or 405 + Allow
//	authorize      403: the policy, the caller's roles x the route (package auth)
//	stream         a streaming route leaves here for its own steps (stream.go)
//	caller cap     429 TOO_MANY_IN_FLIGHT over shed.max_in_flight_per_caller
//	shed group     503 OVERLOADED over the route's shed group cap
//	prepare        Idempotency-Key, Grpc-Timeout, conditional headers, query,
//	               body size and encoding: 400, 412, 413, 415; the route's
//	               deadline (request.go)
//	capture        a route that keeps copies for stale answers starts one (stale.go)
//	forward        grpc-gateway's handler, called directly when its mux would
//	               call it (direct.go); it parses the JSON body once
//	               (package jsonwire) and calls through captureConn, which
//	               hands the capture the request message (stale_capture.go);
//	               the answer is normalised on the way out: 201 + Location,
//	               enum names, problem+json (response.go)
//	keep copy      a whole 200 of such a route is kept, keyed by that
//	               message (stale.go)
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
//     service's full name and handlerClient of the generated
//     RegisterXxxHandlerClient and NewXxxClient.
//  3. Add the upstream to the config. Nothing else names the RPC: the edge
//     and the OpenAPI document both read the options (package protoopt).
//
// # Concurrency
//
// A Server is safe for concurrent use; its only goroutines are net/http's
// and, during /health, one per upstream check, all finished when Serve
// returns. Reloads run one at a time.
package gateway
