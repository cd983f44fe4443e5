// Package apidoc turns the OpenAPI v2 document protoc-gen-openapiv2
// generates from the protos (gen/openapi) into the one the edge serves at
// GET /openapi.json, describing what the edge adds on top of the protos:
//
//   - security: every operation needs "Authorization: Bearer <token>"
//     (securityDefinitions.bearer, applied globally);
//   - errors: a Problem schema (RFC 9457 plus code, traceId, errors, hop,
//     upstream, retryAfter) and problem+json responses 400, 401, 403, 404,
//     502, 503, 504 and default on every operation;
//   - creates: 201 with a Location header instead of 200, and the
//     Idempotency-Key header (required) and Idempotent-Replayed response
//     header where the edge enforces them;
//   - headers every operation accepts: X-Trace-Id and Grpc-Timeout;
//   - enum values without their type prefix, as package jsonwire renders
//     them ("CONFIRMED", not "STATUS_CONFIRMED");
//   - paths that differ only in a variable's name (/api/inventory/{sku} and
//     /api/inventory/{item.sku}) merged into one, which OpenAPI requires.
//
// Build is a pure function of its inputs; the edge runs it once in New.
package apidoc
