package rules

import (
	"regexp"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/getkin/kin-openapi/openapi3"
)

// stringRules maps string rules. Lengths are in characters (code points)
// in both protovalidate and JSON Schema; byte lengths have no equivalent.
func stringRules(r *validate.StringRules, s *openapi3.Schema) {
	if r.HasLen() {
		s.MinLength, s.MaxLength = r.GetLen(), ptr(r.GetLen())
	}
	if r.HasMinLen() {
		s.MinLength = r.GetMinLen()
	}
	if r.HasMaxLen() {
		s.MaxLength = ptr(r.GetMaxLen())
	}
	if r.HasPattern() {
		addPattern(s, r.GetPattern())
	}
	if r.HasPrefix() {
		addPattern(s, "^"+regexp.QuoteMeta(r.GetPrefix()))
	}
	if r.HasSuffix() {
		addPattern(s, regexp.QuoteMeta(r.GetSuffix())+"$")
	}
	if r.HasContains() {
		addPattern(s, regexp.QuoteMeta(r.GetContains()))
	}
	if r.HasConst() {
		s.Enum = []any{r.GetConst()}
	}
	if in := r.GetIn(); len(in) > 0 {
		s.Enum = anys(in)
	}
	if out := r.GetNotIn(); len(out) > 0 {
		s.Not = openapi3.NewSchemaRef("", &openapi3.Schema{Enum: anys(out)})
	}
	if f := format(r); f != "" && s.Format == "" {
		s.Format = f
	}
}

// format is the OpenAPI format of r's well-known rule, or "" for none that
// OpenAPI names.
func format(r *validate.StringRules) string {
	switch {
	case r.GetEmail():
		return "email"
	case r.GetHostname():
		return "hostname"
	case r.GetUri():
		return "uri"
	case r.GetUriRef():
		return "uri-reference"
	case r.GetUuid():
		return "uuid"
	case r.GetIpv4():
		return "ipv4"
	case r.GetIpv6():
		return "ipv6"
	}
	return ""
}

// addPattern sets s's pattern, or adds p as another allOf member when s
// already has one (a JSON Schema has one pattern; all must match).
func addPattern(s *openapi3.Schema, p string) {
	if s.Pattern == "" || s.Pattern == p {
		s.Pattern = p
		return
	}
	s.AllOf = append(s.AllOf, openapi3.NewSchemaRef("", &openapi3.Schema{Pattern: p}))
}

func anys[T any](vs []T) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}
