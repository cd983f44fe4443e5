// Package apidoc turns the OpenAPI 3 document protoc-gen-openapi (gnostic)
// generates from the protos into the finished document the edge serves as
// is at GET /openapi.json. cmd/openapigen runs it in `make generate`.
//
// On top of the generated paths and schemas it adds what the edge does:
//
//   - clean names: operationIds are the lowerCamel RPC names (createOrder;
//     an additional binding's adds its path's words), schemas keep the
//     message name (Order), paths use the plain variable name ({sku}, not
//     {item.sku}); every binding of an RPC carries the tag of its main
//     binding's path (Tags), or its service's name;
//   - a binding with response_body answers that field, and its success
//     response says so (the field's schema; protoc-gen-openapi describes
//     the whole message);
//   - summary and description: the RPC's (portico.api.v1.edge) option
//     (package protoopt), else the comment's first sentence and the comment;
//   - the protovalidate rules and field_behavior as JSON Schema (package
//     rules), on component schemas and on query and path parameters;
//   - enum values as the edge writes them (CONFIRMED, not STATUS_CONFIRMED);
//   - per operation the statuses it can answer (Common and the option's
//     errors): 201 with Location where the option sets a location, else
//     200, as application/json; every error as
//     application/problem+json with one Problem schema whose code is an enum
//     of problem.Codes();
//   - headers: Idempotency-Key (request) and Idempotent-Replayed where the
//     edge requires the key, Location on creates, Retry-After on 429 and 503,
//     X-Trace-Id on every response, Grpc-Timeout (request) with the pattern
//     package timeout (gateway/timeout) accepts;
//   - bearer security on every operation, info with the license.
package apidoc
