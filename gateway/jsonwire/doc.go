// Package jsonwire is the edge's JSON mapping of proto messages: protojson
// (https://protobuf.dev/programming-guides/json/) with a field path for
// every request error and short enum names.
//
// In: Marshaler's decoder hands a request body to Unmarshal, which parses
// it once with protojson; a route whose body is one field (body: "item")
// decodes into that field's message the same way. protojson already rejects malformed JSON,
// invalid UTF-8, duplicate keys (fields, map keys, Struct keys), unknown
// fields, a field set under its JSON and proto names, two members of one
// oneof, wrong JSON types, integers with a fraction or out of range and
// unknown enum names. Only a body protojson rejects, or one nested deeper
// than MaxDepth (a byte scan), is walked by Check, which reports the first
// problem with the JSON path of the offending field ("lines[0].quantity")
// instead of protojson's or strconv's internals:
//
//   - invalid UTF-8 (reported at the field whose string holds it),
//     malformed JSON, trailing data, nesting deeper than MaxDepth and
//     duplicate object keys are syntax errors (Error.Syntax,
//     INVALID_JSON);
//   - everything else is a shape error (INVALID_ARGUMENT); what only
//     protojson rejects (a malformed Timestamp, an unresolvable Any) is
//     reported without a field.
//
// Out: Marshaler writes a message in one pass, as protojson does with
// EmitUnpopulated (stable shapes: zero quantities, empty lists; lowerCamel
// names; 64-bit integers as strings), well-known types by protojson itself
// (compacted, so the output is stable). A route's response_body answer
// (one field of the response: a Field on dynamic messages, or the enum or
// slice a generated wrapper hands over) is written as that member is
// written inside its message, so both paths send the same bytes.
//
// Enum values travel without their type prefix: buf's ENUM_VALUE_PREFIX
// rule makes every value of Order.Status start with STATUS_, which is noise
// in JSON, so Order.status renders "CONFIRMED", not "STATUS_CONFIRMED". An
// enum is renamed when every value starts with UPPER_SNAKE(enum name)+"_"
// (Prefix, the one place that decides it). The encoder writes the short
// name; on the way in both spellings and enum numbers are accepted (a
// short name is the one case where a valid body is walked, then parsed).
//
// An update mask in a query parameter is read in the FieldMask's JSON form
// too (MaskPaths): lowerCamel names of the body's top-level members,
// forwarded in proto names.
//
// Everything here is stateless apart from per-descriptor caches and safe for
// concurrent use.
package jsonwire
