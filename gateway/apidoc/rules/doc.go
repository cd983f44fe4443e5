// Package rules carries the buf.validate rules declared in the protos into
// OpenAPI 3.0 schemas (kin-openapi), so a published schema accepts what the
// services' rules (internal/protocheck) accept.
//
// Field maps one field's rules onto its schema; Message does it for every
// field of a message's component schema and adds the required list. The
// mapping:
//
//	string min_len, max_len, len        minLength, maxLength
//	string pattern                      pattern (the patterns are RE2 and ECMA alike)
//	string prefix, suffix, contains     pattern (allOf when a pattern is already set)
//	string in, const / not_in           enum / not.enum
//	string email, hostname, uri, uuid,  format
//	  ipv4, ipv6
//	numbers gt, gte, lt, lte            minimum, maximum, exclusiveMinimum/Maximum (3.0 booleans)
//	64-bit integers on a string schema  pattern of the decimal range (protojson writes them as strings)
//	numbers in, const / not_in          enum / not.enum
//	enum defined_only, in, const        enum of the value names
//	bool const                          enum
//	repeated min_items, max_items,      minItems, maxItems, uniqueItems, and items' rules on items
//	  unique, items
//	map min_pairs, max_pairs            minProperties, maxProperties
//	required, field_behavior REQUIRED   the message schema's required
//	rules that refuse a zero value      required, for a field without presence:
//	                                    protojson reads an absent field as zero
//	field_behavior OUTPUT_ONLY          readOnly
//	CEL on a message field:             the sub-property's bound (a pattern of the
//	  this.<integer field> <op> <int>   decimal range for a 64-bit one, minimum and
//	  with op <, <=, >, >=, ==          maximum otherwise), required when the bound
//	                                    refuses zero
//
// Field appends every CEL rule's message to the schema's description, so a
// reader sees it in words. Rules with no JSON Schema equivalent leave the
// schema as it is otherwise: other CEL expressions (field and message
// cel; an expression is mapped only when it is exactly the form above),
// byte lengths of strings, bytes rules, duration and timestamp rules,
// float finite, message oneof rules and ignore conditions. In Portico's
// protos the mapped CEL rules are a unit price's cap (Item.unit_price,
// 1e12 minor units, tighter than Money's own 1e15) and a charge's minimum
// (CreatePaymentRequest.amount, at least 1). The schema-blind one is each
// SKU once in an order's or reservation's lines (uniqueness by a member):
// a rule "this.map(l, l.<member>).unique()" puts the member's JSON name in
// the list's x-portico-unique-by (UniqueByExtension).
//
// Mask gives an update mask query parameter a pattern: the FieldMask's
// JSON form as the edge reads it (jsonwire.MaskPaths: comma-separated
// lowerCamel names of top-level members), limited to the settable members
// (Settable) and to the path count and length of the mask's CEL rules
// ("this.paths.size() <= N", "this.paths.all(p, p.size() <= N)").
//
// A 64-bit integer's pattern accepts the canonical decimal string
// protojson writes; protojson also reads a JSON number or an exponent
// ("1e3") there, which a string schema refuses.
//
// Field never changes a schema shared through a $ref: Message wraps such a
// property in allOf when its field adds something (readOnly, a CEL note, a
// CEL bound as a second allOf member: an object schema whose property
// carries the bound, intersected with the target's own rule).
// Both functions are pure apart from writing to s and safe for concurrent
// use on distinct schemas.
package rules
