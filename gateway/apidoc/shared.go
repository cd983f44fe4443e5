package apidoc

import (
	"net/http"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portico-gateway/portico/gateway/problem"
)

// problemMedia is the media type of every error answer (RFC 9457).
const problemMedia = "application/problem+json"

// responseText describes the shared problem response of each status.
var responseText = map[int]string{
	400: "Malformed JSON (INVALID_JSON), a body or parameter that breaks a field rule (INVALID_ARGUMENT, with errors), a bad Grpc-Timeout (INVALID_TIMEOUT) or Idempotency-Key (IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID), credentials sent wrongly (MALFORMED_CREDENTIALS), a malformed or misplaced If-Match or If-None-Match (INVALID_CONDITIONAL_HEADER).",
	401: "No or invalid credential (UNAUTHENTICATED), an expired one (CREDENTIALS_EXPIRED), a replayed or mistimed signed request (REQUEST_REPLAYED, CLOCK_SKEW); WWW-Authenticate: Bearer.",
	403: "No role of the caller may call this operation (FORBIDDEN, PERMISSION_DENIED, ADMIN_REQUIRED); the description lists the roles.",
	404: "The resource does not exist; code names it, e.g. ORDER_NOT_FOUND.",
	409: "Conflicts with the current state: ALREADY_EXISTS or a FAILED_PRECONDITION reason such as INSUFFICIENT_STOCK or ORDER_NOT_CANCELLABLE.",
	406: "A streaming operation cannot answer in any media type Accept allows (NOT_ACCEPTABLE): send application/x-ndjson, text/event-stream, */* or no Accept.",
	412: "If-Match named no current entity tag of the resource (ETAG_MISMATCH): it changed since it was read, or the tag was weak. Nothing was changed; read it again and retry with the new ETag.",
	413: "The body is over the route's limit, as sent or once gzip-decoded (CONTENT_TOO_LARGE).",
	415: "The body is not application/json, or its Content-Encoding is not gzip (UNSUPPORTED_MEDIA_TYPE); Accept-Encoding names gzip.",
	422: "Understood but refused: PAYMENT_DECLINED, or IDEMPOTENCY_KEY_REUSED (the same key with a different body).",
	429: "A rate limit of the gateway is used up (RATE_LIMIT_EXCEEDED; layer names it, the RateLimit headers say what is left), the caller is banned for a while (CALLER_BANNED), has too many requests in flight (TOO_MANY_IN_FLIGHT) or streams open (TOO_MANY_STREAMS), or an upstream is shedding load (RESOURCE_EXHAUSTED); Retry-After says when to retry.",
	502: "The upstream service could not be reached (UPSTREAM_UNAVAILABLE).",
	503: "Temporarily unavailable: CIRCUIT_OPEN, OVERLOADED, SERVICE_UNAVAILABLE or a reason such as INVENTORY_UNAVAILABLE; Retry-After says when to retry. MESSAGE_TOO_LARGE (a message passed a size limit) has no Retry-After: the same call meets the same limit.",
	504: "The upstream did not answer within the deadline (UPSTREAM_TIMEOUT); hop names it. The outcome is unknown.",
}

// responseName names the shared response of a status: "NotFound".
func responseName(status int) string {
	n := ""
	for _, w := range splitWords(http.StatusText(status)) {
		n += w
	}
	return n
}

func splitWords(s string) []string {
	var out []string
	w := ""
	for _, r := range s {
		if r == ' ' || r == '-' {
			out, w = append(out, w), ""
			continue
		}
		w += string(r)
	}
	return append(out, w)
}

func str(desc string) *openapi3.SchemaRef {
	return openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, Description: desc})
}

func integer(desc string) *openapi3.SchemaRef {
	return openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"integer"}, Format: "int32", Description: desc})
}

// addShared adds the Problem schema, the shared responses, headers and
// parameters and the bearer security scheme.
func addShared(doc *openapi3.T) {
	c := doc.Components
	c.Schemas["Problem"] = openapi3.NewSchemaRef("", problemSchema())
	c.Schemas["FieldViolation"] = openapi3.NewSchemaRef("", &openapi3.Schema{
		Type:        &openapi3.Types{"object"},
		Description: "One field that breaks a rule.",
		Required:    []string{"field", "detail"},
		Properties: openapi3.Schemas{
			"field":   str("Field path in the request's JSON names, e.g. lines[0].quantity."),
			"pointer": str("The same location as a JSON Pointer (RFC 6901) fragment, e.g. #/lines/0/quantity."),
			"detail":  str("What is wrong with the field."),
		},
	})
	c.Headers = openapi3.Headers{
		"XTraceId":            header("The request's trace id, also the problem's traceId.", "string"),
		"RetryAfter":          header("Seconds to wait before retrying.", "integer"),
		"WWWAuthenticate":     header(`The challenge: Bearer realm="portico".`, "string"),
		"Location":            header("Path of the created resource.", "string"),
		"RateLimitPolicy":     header(`The rate limits that apply, per draft-ietf-httpapi-ratelimit-headers-10: one member per layer ("caller", a route group, "global"), q requests at once (the layer's burst, what RateLimit's r counts down from) in a window of w seconds, e.g. "caller";q=12;w=1. Sent when the gateway has rate limits.`, "string"),
		"RateLimit":           header(`What is left of each rate limit, per draft-ietf-httpapi-ratelimit-headers-10: r requests remaining, t seconds until full again (on a 429, until a request fits), e.g. "caller";r=11;t=1.`, "string"),
		"XRateLimitLimit":     header("The rate limit closest to running out (on a 429, the one that refused): its capacity, the requests X-RateLimit-Remaining counts down from (its burst, as RateLimit-Policy's q).", "integer"),
		"XRateLimitRemaining": header("Requests that limit admits right now; 0 on a 429.", "integer"),
		"PreferenceApplied": {Value: &openapi3.Header{Parameter: openapi3.Parameter{
			Description: "respond-async on a 202: the preference was applied (RFC 7240).",
			Schema:      openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, Enum: []any{"respond-async"}}),
		}}},
		"IdempotentReplayed": {Value: &openapi3.Header{Parameter: openapi3.Parameter{
			Description: "true when the answer replays an earlier request with the same Idempotency-Key.",
			Schema:      openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, Enum: []any{"true"}}),
		}}},
	}
	staleSharedHeaders(c.Headers)
	c.Responses = openapi3.ResponseBodies{}
	for status, text := range responseText {
		h := openapi3.Headers{"X-Trace-Id": {Ref: "#/components/headers/XTraceId"}}
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			h["Retry-After"] = &openapi3.HeaderRef{Ref: "#/components/headers/RetryAfter"}
		}
		if status == http.StatusTooManyRequests {
			rateLimitHeaders(h)
		}
		if status == http.StatusUnauthorized {
			h["WWW-Authenticate"] = &openapi3.HeaderRef{Ref: "#/components/headers/WWWAuthenticate"}
		}
		if status == http.StatusPreconditionFailed {
			h["ETag"] = header(`On a change the service refused: the resource's current entity tag, "<etag>"; retry with it in If-Match without reading the resource again. Absent on a GET's 412.`, "string")
		}
		c.Responses[responseName(status)] = &openapi3.ResponseRef{Value: &openapi3.Response{
			Description: openapi3.Ptr(text),
			Headers:     h,
			Content:     openapi3.Content{problemMedia: openapi3.NewMediaType().WithSchemaRef(openapi3.NewSchemaRef("#/components/schemas/Problem", nil))},
		}}
	}
	c.Parameters = sharedParameters()
	conditionalShared(c)
	c.SecuritySchemes = securitySchemes()
	doc.Security = openapi3.SecurityRequirements{{schemeBearer: []string{}}, {schemeSignedApp: []string{}}}
}

// rateLimitHeaders adds the rate limit headers of the edge's responses.
func rateLimitHeaders(h openapi3.Headers) {
	for name, ref := range map[string]string{"RateLimit-Policy": "RateLimitPolicy", "RateLimit": "RateLimit",
		"X-RateLimit-Limit": "XRateLimitLimit", "X-RateLimit-Remaining": "XRateLimitRemaining"} {
		h[name] = &openapi3.HeaderRef{Ref: "#/components/headers/" + ref}
	}
}

func header(desc, typ string) *openapi3.HeaderRef {
	return &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
		Description: desc,
		Schema:      openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{typ}}),
	}}}
}

func problemSchema() *openapi3.Schema {
	codes := []any{}
	for _, c := range problem.Codes() {
		codes = append(codes, c)
	}
	return &openapi3.Schema{
		Type:        &openapi3.Types{"object"},
		Description: "RFC 9457 problem details with Portico's extension members.",
		Required:    []string{"type", "title", "status", "code"},
		Properties: openapi3.Schemas{
			"type": {Value: &openapi3.Schema{Type: &openapi3.Types{"string"}, Format: "uri-reference", Example: "/problems/upstream-timeout",
				Description: "The problem type: a path on the edge (resolve it against the request URL) whose page says what the problem means and whether to retry."}},
			"title":    str("Short summary of the problem type."),
			"status":   integer("The HTTP status."),
			"detail":   str("Explanation specific to this occurrence."),
			"instance": str("The request path."),
			"code": {Value: &openapi3.Schema{Type: &openapi3.Types{"string"}, Enum: codes,
				Description: "Stable UPPER_SNAKE identifier to branch on: the edge's own codes and the services' reasons."}},
			"traceId":    str("The request's trace id, also in the X-Trace-Id header."),
			"errors":     {Value: &openapi3.Schema{Type: &openapi3.Types{"array"}, Description: "400 INVALID_ARGUMENT: every field that breaks a rule.", Items: openapi3.NewSchemaRef("#/components/schemas/FieldViolation", nil)}},
			"hop":        str("504: the upstream that did not answer in time."),
			"upstream":   str("503 CIRCUIT_OPEN and OVERLOADED: the upstream concerned."),
			"retryAfter": integer("Seconds to wait; the same as Retry-After."),
			"layer":      str("429 RATE_LIMIT_EXCEEDED: the rate limit that refused (caller, a route group's name, global, failed_auth); CALLER_BANNED: ban."),
		},
	}
}

// Parameter names in components.parameters.
const (
	paramTraceID        = "TraceId"
	paramGrpcTimeout    = "GrpcTimeout"
	paramIdempotencyKey = "IdempotencyKey"
	paramPrefer         = "Prefer"
)

func sharedParameters() openapi3.ParametersMap {
	maxTrace, maxKey, maxPrefer := uint64(64), uint64(255), uint64(1024)
	return openapi3.ParametersMap{
		paramTraceID: {Value: &openapi3.Parameter{
			Name: "X-Trace-Id", In: "header",
			Description: "Trace id to use for this request; an invalid one is replaced. W3C traceparent is accepted too. Echoed on every response.",
			Schema:      openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, MinLength: 1, MaxLength: &maxTrace, Pattern: "^[A-Za-z0-9._-]{1,64}$"}),
		}},
		paramGrpcTimeout: {Value: &openapi3.Parameter{
			Name: "Grpc-Timeout", In: "header",
			Description: "How long to wait, in gRPC's format: 1-8 digits, not all zero, and a unit H, M, S, m (ms), u (µs) or n (ns), e.g. 500m; clamped to the route's maximum.",
			Schema:      openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, Pattern: GrpcTimeoutPattern}),
		}},
		paramPrefer: {Value: &openapi3.Parameter{
			Name: "Prefer", In: "header",
			Description: "RFC 7240 preferences, comma-separated, at most 1024 bytes and 16 preferences (else 400). respond-async: when the work cannot be finished now (an order while inventory is unreachable) accept it for later and answer 202 with Location instead of 503; it takes no value (respond-async=false, or any value, is not applied). Unknown preferences are ignored.",
			Schema:      openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, MaxLength: &maxPrefer}),
		}},
		paramIdempotencyKey: {Value: &openapi3.Parameter{
			Name: "Idempotency-Key", In: "header", Required: true,
			Description: "Client-chosen key, 1-255 printable ASCII characters. Repeating a request with the same key replays the first answer (Idempotent-Replayed: true); the same key with a different body is 422 IDEMPOTENCY_KEY_REUSED.",
			Schema:      openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, MinLength: 1, MaxLength: &maxKey, Pattern: "^[ -~]{1,255}$"}),
		}},
	}
}

// GrpcTimeoutPattern is what package timeout (gateway/timeout) accepts: 1-8 digits with at
// least one non-zero digit, then a unit. Written without lookahead (Go's
// regexp has none): k leading zeros, a non-zero digit, at most 7-k more.
var GrpcTimeoutPattern = func() string {
	p := "^(?:"
	for k := 0; k < 8; k++ {
		if k > 0 {
			p += "|"
		}
		p += zeros(k) + "[1-9]"
		if rest := 7 - k; rest > 0 {
			p += "[0-9]{0," + strconv.Itoa(rest) + "}"
		}
	}
	return p + ")[HMSmun]$"
}()

func zeros(k int) string {
	if k == 0 {
		return ""
	}
	return "0{" + strconv.Itoa(k) + "}"
}
