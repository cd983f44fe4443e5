package apidoc

import (
	"net/http"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Conditional requests as the edge answers them (gateway/conditional.go):
// every GET answers ETag and takes If-None-Match (304) and If-Match (412);
// a change whose request has an AIP-154 etag field takes If-Match (412
// when the resource changed). The facts come from the descriptors, as at
// the edge.

// Names in components.
const (
	paramIfMatch     = "IfMatch"
	paramIfNoneMatch = "IfNoneMatch"
	headerETag       = "ETag"
)

// conditional adds op's conditional headers and answers.
func conditional(op *openapi3.Operation, verb string, in protoreflect.MessageDescriptor) {
	get := verb == http.MethodGet
	if !get && !hasEtag(in) {
		return
	}
	op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Ref: "#/components/parameters/" + paramIfMatch})
	op.Responses.Set("412", &openapi3.ResponseRef{Ref: "#/components/responses/" + responseName(http.StatusPreconditionFailed)})
	if !get {
		return
	}
	op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Ref: "#/components/parameters/" + paramIfNoneMatch})
	if ok := op.Responses.Value(strconv.Itoa(http.StatusOK)); ok != nil && ok.Value != nil {
		ok.Value.Headers["ETag"] = &openapi3.HeaderRef{Ref: "#/components/headers/" + headerETag}
	}
	op.Responses.Set("304", &openapi3.ResponseRef{Value: &openapi3.Response{
		Description: openapi3.Ptr("Not Modified: If-None-Match matched the current ETag (weak comparison, or \"*\"). No body; the ETag header is sent."),
		Headers: openapi3.Headers{
			"X-Trace-Id": {Ref: "#/components/headers/XTraceId"},
			"ETag":       {Ref: "#/components/headers/" + headerETag},
		},
	}})
}

// hasEtag reports whether md has AIP-154's top-level string field etag.
func hasEtag(md protoreflect.MessageDescriptor) bool {
	fd := md.Fields().ByName("etag")
	return fd != nil && fd.Kind() == protoreflect.StringKind && !fd.IsList()
}

// conditionalShared adds the shared header and parameters.
func conditionalShared(c *openapi3.Components) {
	c.Headers[headerETag] = header(`The representation's entity tag (RFC 9110 section 8.8.3). A resource with an etag member (an item, an order, a payment) answers its strong tag, "<etag>"; any other GET answer (a list, a reservation) a weak one, W/"<hash of the answer>". Send it back in If-None-Match to be answered 304 while nothing changed, or in If-Match to change the resource only if nobody else did.`, "string")
	maxLen := uint64(2048)
	list := func(name, desc string) *openapi3.ParameterRef {
		return &openapi3.ParameterRef{Value: &openapi3.Parameter{
			Name: name, In: "header", Description: desc,
			Schema: openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, MinLength: 1, MaxLength: &maxLen}),
		}}
	}
	c.Parameters[paramIfNoneMatch] = list("If-None-Match", `"*" or a comma-separated list of entity tags (at most 32, 2048 bytes), as ETag gave them. On a GET: 304 Not Modified when one matches the current ETag by weak comparison (W/ ignored), or for "*". Malformed: 400 INVALID_CONDITIONAL_HEADER.`)
	c.Parameters[paramIfMatch] = list("If-Match", `"*" or entity tags as ETag gave them. On a GET: 412 ETAG_MISMATCH unless one matches the current ETag by strong comparison. On a change: one strong tag, the resource's etag as last read; 412 ETAG_MISMATCH when the resource changed since (nothing is changed), and for a weak tag (W/...), which never matches. "*" makes no condition. Malformed, or several strong tags on a change: 400 INVALID_CONDITIONAL_HEADER.`)
}
