package apidoc

// responseName names the shared problem responses by status.
var responseName = map[string]string{
	"400":     "BadRequest",
	"401":     "Unauthorized",
	"403":     "Forbidden",
	"404":     "NotFound",
	"502":     "BadGateway",
	"503":     "ServiceUnavailable",
	"504":     "GatewayTimeout",
	"default": "Problem",
}

var responseText = map[string]string{
	"BadRequest":         "Malformed JSON (INVALID_JSON), a body or parameter that does not fit the request (INVALID_ARGUMENT, with errors), a bad Grpc-Timeout (INVALID_TIMEOUT) or Idempotency-Key (IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID).",
	"Unauthorized":       "No or unknown bearer token (UNAUTHENTICATED); WWW-Authenticate: Bearer.",
	"Forbidden":          "The token's role may not call this operation (FORBIDDEN).",
	"NotFound":           "The resource does not exist; code names it, e.g. ORDER_NOT_FOUND.",
	"BadGateway":         "The upstream service could not be reached (UPSTREAM_UNAVAILABLE).",
	"ServiceUnavailable": "Temporarily unavailable: CIRCUIT_OPEN, OVERLOADED, SERVICE_UNAVAILABLE or a reason such as INVENTORY_UNAVAILABLE; Retry-After says when to retry. MESSAGE_TOO_LARGE (a message passed a size limit) has no Retry-After: the same call meets the same limit.",
	"GatewayTimeout":     "The upstream did not answer within the deadline (UPSTREAM_TIMEOUT); hop names it. The outcome is unknown.",
	"Problem":            "Any other error, as RFC 9457 problem details: 405 METHOD_NOT_ALLOWED, 409 conflicts, 413 CONTENT_TOO_LARGE, 415 UNSUPPORTED_MEDIA_TYPE, 431 REQUEST_HEADER_FIELDS_TOO_LARGE, 422 (PAYMENT_DECLINED, IDEMPOTENCY_KEY_REUSED), 429, 500 INTERNAL, 501 NOT_IMPLEMENTED.",
}

// addShared adds the Problem schema, the shared responses and parameters
// and the bearer security scheme.
func addShared(doc object) {
	defs, _ := doc["definitions"].(object)
	if defs == nil {
		defs = object{}
	}
	defs["Problem"] = problemSchema()
	defs["FieldViolation"] = object{
		"type":     "object",
		"required": []any{"field", "detail"},
		"properties": object{
			"field":   object{"type": "string", "example": "lines[0].quantity", "description": "Field path in the request's JSON names."},
			"pointer": object{"type": "string", "example": "#/lines/0/quantity", "description": "The same location as a JSON Pointer (RFC 6901) fragment."},
			"detail":  object{"type": "string", "description": "What is wrong with the field."},
		},
	}
	doc["definitions"] = defs
	responses := object{}
	for name, text := range responseText {
		responses[name] = object{
			"description": text,
			"schema":      object{"$ref": "#/definitions/Problem"},
			"headers":     object{"X-Trace-Id": object{"type": "string"}},
		}
	}
	doc["responses"] = responses
	doc["parameters"] = sharedParameters()
	doc["securityDefinitions"] = object{"bearer": object{
		"type": "apiKey", "in": "header", "name": "Authorization",
		"description": "A bearer token: `Authorization: Bearer <token>` (RFC 6750).",
	}}
	doc["security"] = []any{object{"bearer": []any{}}}
}

func problemSchema() object {
	str := func(desc string) object { return object{"type": "string", "description": desc} }
	return object{
		"type":        "object",
		"description": "RFC 9457 problem details with Portico's extension members.",
		"required":    []any{"type", "title", "status", "code"},
		"properties": object{
			"type": object{"type": "string", "format": "uri-reference", "example": "/problems/upstream-timeout",
				"description": "The problem type: a path on the edge (resolve it against the request URL) whose page says what the problem means and whether to retry."},
			"title":      str("Short summary of the problem type."),
			"status":     object{"type": "integer", "format": "int32", "example": 504},
			"detail":     str("Explanation specific to this occurrence."),
			"instance":   str("The request path."),
			"code":       object{"type": "string", "example": "UPSTREAM_TIMEOUT", "description": "Stable UPPER_SNAKE identifier to branch on."},
			"traceId":    str("The request's trace id, also in the X-Trace-Id header."),
			"errors":     object{"type": "array", "items": object{"$ref": "#/definitions/FieldViolation"}},
			"hop":        str("504: the upstream that did not answer in time."),
			"upstream":   str("503 CIRCUIT_OPEN and OVERLOADED: the upstream concerned."),
			"retryAfter": object{"type": "integer", "format": "int32", "description": "Seconds to wait; the same as Retry-After."},
		},
	}
}

func sharedParameters() object {
	return object{
		"TraceId": object{
			"name": "X-Trace-Id", "in": "header", "required": false, "type": "string", "maxLength": 64,
			"pattern":     "^[A-Za-z0-9._-]{1,64}$",
			"description": "Trace id to use for this request; an invalid one is replaced. W3C traceparent is accepted too. Echoed on every response.",
		},
		"GrpcTimeout": object{
			"name": "Grpc-Timeout", "in": "header", "required": false, "type": "string",
			"pattern":     "^[0-9]{1,8}[HMSmun]$",
			"description": "How long to wait, in gRPC's format (500m = 500 ms); clamped to the route's maximum.",
		},
		"IdempotencyKey": object{
			"name": "Idempotency-Key", "in": "header", "required": true, "type": "string",
			"minLength": 1, "maxLength": 255,
			"description": "Client-chosen key, 1-255 printable ASCII characters. Repeating a request with the same key replays the first answer; the same key with a different body is 422 IDEMPOTENCY_KEY_REUSED.",
		},
	}
}
