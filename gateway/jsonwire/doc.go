// Package jsonwire is the edge's JSON mapping of proto messages: protojson
// (https://protobuf.dev/programming-guides/json/) made strict on the way in
// and stable on the way out.
//
// In: Check validates a request body against the request message before
// grpc-gateway decodes it, and reports the first problem with the JSON path
// of the offending field ("lines[0].quantity") instead of protojson's or
// strconv's internals:
//
//   - invalid UTF-8, malformed JSON, trailing data, nesting deeper than
//     MaxDepth and duplicate object keys (which protojson silently accepts
//     for the last one) are syntax errors (Error.Syntax, INVALID_JSON);
//   - unknown fields, a field set twice under its JSON and proto names, two
//     members of one oneof, values of the wrong JSON type, integers with a
//     fraction or out of their type's range, unknown enum names and bad
//     base64 are shape errors (INVALID_ARGUMENT).
//
// A body that passes is also run through protojson itself; anything only
// protojson rejects (a malformed Timestamp, an unresolvable Any) is reported
// without a field.
//
// Out: Marshaler is the runtime.Marshaler the edge registers. It emits
// unpopulated fields (stable shapes: zero quantities, empty lists) and
// lowerCamel names.
//
// Enum values travel without their type prefix: buf's ENUM_VALUE_PREFIX
// rule makes every value of Order.Status start with STATUS_, which is noise
// in JSON, so Order.status renders "CONFIRMED", not "STATUS_CONFIRMED". An
// enum is renamed when every value starts with UPPER_SNAKE(enum name)+"_";
// Check accepts both spellings and hands grpc-gateway the full one. Enum
// numbers are accepted as protojson accepts them.
//
// Everything here is stateless apart from per-descriptor caches and safe for
// concurrent use.
package jsonwire
