// Package rules carries a proto message's protovalidate (buf.validate)
// rules and google.api.field_behavior into its OpenAPI 3 JSON Schema, so
// the published document admits exactly what the services accept.
//
// Mapped: required (buf.validate required and field_behavior REQUIRED),
// string min_len/max_len/len/pattern/const/in, numeric gt/gte/lt/lte/const/in,
// repeated min_items/max_items/unique, enum in/const, and OUTPUT_ONLY as
// readOnly. CEL rules have no JSON Schema form and are left to the service.
package rules
