// Package gateway is Portico's REST/JSON edge: one HTTP entry point in front
// of the gRPC services, built on grpc-gateway's generated handlers.
//
// # Pipeline
//
// Every request runs through the same steps, in this order; each rejection
// happens before any upstream call:
//
//	trace id     X-Trace-Id (1-64 of [A-Za-z0-9._-]) or W3C traceparent, else a new
//	             id; echoed as X-Trace-Id on every response, in every problem body
//	             and access line, and sent upstream (x-trace-id, traceparent)
//	header size  431 when the request line and headers exceed max_header_bytes
//	ops          /health, /healthz/live, /healthz/ready, /metrics, /openapi.json:
//	             GET/HEAD, no token
//	authenticate 401 UNAUTHENTICATED + WWW-Authenticate: Bearer (package auth)
//	authorize    403 FORBIDDEN: role x method x path, nothing else (package auth)
//	route        404 ROUTE_NOT_FOUND, 405 METHOD_NOT_ALLOWED + Allow (package route)
//	prepare      Idempotency-Key, Grpc-Timeout, query, body: 400, 413, 415
//	(rate limit) the next step, to come
//	forward      grpc-gateway's generated handler over the upstream connection,
//	             bounded by the route's deadline
//	normalize    200 -> 201 + Location for creates, enum names, problem+json errors
//
// One JSON access line is logged per request (time, level, service "gateway",
// traceId, method, path, route, status, code, durationMs, upstream; error
// for 5xx), and counted in /metrics (package metrics). Headers are never
// logged, so tokens and cookies cannot leak.
//
// # API
//
// The cmd layer loads a Config (LoadConfig, or DevConfig for portico dev),
// calls New, listens on Config.Listen and calls Serve until a signal. New
// dials every upstream through the DialFunc (WithDialer; default Dial), which
// is where the client resilience chain plugs in: a DialFunc decodes
// UpstreamConfig.Resilience and returns Dial(ctx, up, its interceptors...),
// keeping DialOptions (the answered stats handler and trace interceptor).
// /health never goes through the DialFunc: New dials each upstream a second
// time with plain Dial for its checks, so unauthenticated health traffic
// cannot trip a breaker or burn retries, and an open breaker cannot make
// /health report a healthy upstream DOWN. Close closes both connections.
// When a reload moves an upstream's API connection to new addresses, the
// cmd layer calls SetUpstreamAddresses so /health follows.
// /openapi.json serves gen/openapi's document unless WithOpenAPI replaces it.
//
// # Config
//
// One YAML document, decoded strictly: unknown keys, duplicate keys and wrong
// types are errors naming the field path ("upstreams[0].adresses: unknown
// field (line 7)"); every field's zero value means its default. Reference
// (deploy/portico.example.yaml):
//
//	listen: 127.0.0.1:43100        # default; loopback so demo tokens stay local
//	shutdown_grace: 10s            # default: in-flight requests' time to finish
//	drain_delay: 0s                # default: ready answers 503 this long first
//	http:
//	  read_header_timeout: 5s      # default
//	  read_timeout: 30s            # default
//	  idle_timeout: 2m             # default
//	  max_header_bytes: 65536      # default
//	upstreams:                     # required; one per name in routes.go
//	  - name: inventory
//	    addresses: [127.0.0.1:43101]     # one target, or several host:port (round robin)
//	    timeout: 5s                      # default deadline of the upstream's routes
//	    health_service: portico.inventory.v1.InventoryService  # default "" = server
//	    resilience: {...}                # raw YAML for the resilience chain
//	routes:
//	  max_body_bytes: 1048576      # default (1 MiB); larger bodies are 413
//	  max_timeout: 30s             # default cap on a client's Grpc-Timeout
//	  overrides:                   # keyed "METHOD /template", "/template" or RPC name
//	    "POST /api/orders": {timeout: 4s, max_timeout: 10s, max_body_bytes: 65536}
//	auth:
//	  tokens:
//	    - {token: demo-admin-token, subject: course-admin, role: admin}
//	health:
//	  timeout: 300ms               # default, per upstream check
//
// New checks what needs the route table: every override key selects at
// least one route and no route is selected twice, every route's timeout is
// within its maximum, and upstream names match the registration list.
//
// # Adding a proto service
//
//  1. Add the google.api.http options to the proto and run make generate.
//  2. Add one line to registrations in routes.go: the upstream name, the
//     service's full name and the generated RegisterXxxHandler.
//  3. If an RPC creates a resource or needs an Idempotency-Key, add it to
//     behaviours in routes.go (Location template, key required).
//  4. Add the upstream to the config; new routes default to the upstream's
//     timeout and the global limits. Roles reach new paths per package auth.
//
// # Errors
//
// Every non-2xx answer under /api (and every edge error elsewhere) is an RFC
// 9457 problem, application/problem+json, with type, title, status, detail,
// instance (the path), code and traceId; see package problem for the members
// and for THE table from gRPC status to HTTP status. Problems the edge raises
// itself:
//
//	400 INVALID_JSON             malformed JSON, invalid UTF-8, duplicate keys (errors names the key)
//	400 INVALID_ARGUMENT         unknown field, wrong type, fraction or out-of-range number, bad
//	                             or proto-named query parameter, non-UTF-8 path (errors names
//	                             the field)
//	400 INVALID_TIMEOUT          Grpc-Timeout not 1-8 digits and a unit of H M S m u n
//	400 IDEMPOTENCY_KEY_MISSING  a route that needs one (POST /api/orders, /api/payments)
//	400 IDEMPOTENCY_KEY_INVALID  empty, over 255 characters, not printable ASCII, or sent twice
//	401 UNAUTHENTICATED          no or unknown bearer token
//	403 FORBIDDEN                the role may not call the method on the path
//	404 ROUTE_NOT_FOUND          no route has the path; an empty path variable
//	                             (/api/orders/) names no resource, so none has
//	405 METHOD_NOT_ALLOWED       a route has the path, not the method; Allow lists them
//	413 CONTENT_TOO_LARGE        body over the route's max_body_bytes
//	415 UNSUPPORTED_MEDIA_TYPE   a body that is not application/json (utf-8)
//	431 REQUEST_HEADER_FIELDS_TOO_LARGE  request line and headers over http.max_header_bytes
//	500 INTERNAL                 a bug in the edge (the panic is logged)
//
// Bad input never yields a 5xx: FuzzAPIRequest holds the edge to that. The
// one exception is honest: a client whose own Grpc-Timeout is shorter than
// the route's timeout may get 504 UPSTREAM_TIMEOUT when it runs out.
//
// A few requests never reach the edge's handler, so they get net/http's own
// plain-text answer without X-Trace-Id: those its parser rejects (a
// malformed request line, header bytes or Host, 400; an unsupported
// Transfer-Encoding, 501; an Expect other than 100-continue, 417) and
// headers beyond max_header_bytes + 4096, the slack net/http reads before
// it answers 431. Headers over max_header_bytes that it does read get the
// 431 problem. "OPTIONS *" reaches the edge (404 ROUTE_NOT_FOUND).
//
// # Requests
//
// Bodies are checked against the request message before grpc-gateway sees
// them (package jsonwire); query parameters must name fields the path and
// body do not bind, by the JSON (lowerCamel) names /openapi.json lists, and
// must parse as their type. A proto name (page_size) is 400 saying which
// name to use (pageSize): grpc-gateway would bind both, but one documented
// spelling per parameter is what clients, caches and logs can rely on.
// Nothing the client sends becomes upstream metadata except what the edge
// maps: the verified principal (x-portico-subject, x-portico-role from
// package callmeta), Idempotency-Key as idempotency-key on routes that take
// one, and the trace id.
// Authorization, cookies, Grpc-Metadata-*, x-portico-*, X-Forwarded-* and
// Forwarded are dropped; grpc-gateway adds x-forwarded-host and
// x-forwarded-for derived from the connection itself. X-HTTP-Method-Override
// and grpc-gateway's POST-to-GET fallback are off. HEAD runs the GET route.
//
// Deadlines: every call has one: the route's timeout, or the client's
// Grpc-Timeout clamped to the route's max_timeout (package deadline). When
// it fires the answer is 504 UPSTREAM_TIMEOUT with hop.
//
// # Responses
//
// JSON uses lowerCamel names and emits unpopulated fields, so shapes are
// stable. Enum values render without their type prefix: Order.status is
// "CONFIRMED", not "STATUS_CONFIRMED" (likewise Payment.status and
// Reservation.state); both spellings are accepted on input. Creates
// (behaviours in routes.go) answer 201 with Location, also when the order
// service replays an idempotent request, which adds Idempotent-Replayed:
// true; that is the only upstream metadata that becomes a header.
//
// # Operations
//
// GET /health asks every upstream's grpc.health.v1 Check in parallel within
// health.timeout, over its own connection outside the client chain, and
// answers {"status":"UP"|"DEGRADED","service":"api-gateway",
// "dependencies":[{"name":"inventory","status":"UP"},...]}, 503 when any is
// DOWN. /healthz/live is always 200 and never touches an upstream.
// /healthz/ready is 200 while Serve runs and 503 before and from the moment
// shutdown begins. /metrics serves the registry (WithRegistry) and
// /openapi.json the post-processed OpenAPI document (package apidoc). None
// needs a token; /metrics can be restricted later.
//
// Serve shuts down when its context ends: ready turns 503, the edge serves
// on for drain_delay, stops accepting, gives in-flight requests
// shutdown_grace, then closes the upstream connections.
//
// A Server is safe for concurrent use; its only goroutines are net/http's
// and, during /health, one per upstream check, all finished when Serve
// returns.
package gateway
