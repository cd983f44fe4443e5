package problem

import "net/http"

// Codes the edge raises itself or uses when an upstream gave no reason.
const (
	CodeInvalidJSON           = "INVALID_JSON"
	CodeInvalidArgument       = "INVALID_ARGUMENT"
	CodeInvalidTimeout        = "INVALID_TIMEOUT"
	CodeIdempotencyKeyMissing = "IDEMPOTENCY_KEY_MISSING"
	CodeIdempotencyKeyInvalid = "IDEMPOTENCY_KEY_INVALID"
	CodeOutOfRange            = "OUT_OF_RANGE"
	CodeUnauthenticated       = "UNAUTHENTICATED"
	CodeForbidden             = "FORBIDDEN"
	CodePermissionDenied      = "PERMISSION_DENIED"
	CodeRouteNotFound         = "ROUTE_NOT_FOUND"
	CodeNotFound              = "NOT_FOUND"
	CodeMethodNotAllowed      = "METHOD_NOT_ALLOWED"
	CodeAlreadyExists         = "ALREADY_EXISTS"
	CodeAborted               = "ABORTED"
	CodeFailedPrecondition    = "FAILED_PRECONDITION"
	CodeContentTooLarge       = "CONTENT_TOO_LARGE"
	CodeUnsupportedMediaType  = "UNSUPPORTED_MEDIA_TYPE"
	CodeHeadersTooLarge       = "REQUEST_HEADER_FIELDS_TOO_LARGE"
	CodeResourceExhausted     = "RESOURCE_EXHAUSTED"
	CodeClientClosedRequest   = "CLIENT_CLOSED_REQUEST"
	CodeInternal              = "INTERNAL"
	CodeNotImplemented        = "NOT_IMPLEMENTED"
	CodeUpstreamUnavailable   = "UPSTREAM_UNAVAILABLE"
	CodeServiceUnavailable    = "SERVICE_UNAVAILABLE"
	CodeCircuitOpen           = "CIRCUIT_OPEN"
	CodeOverloaded            = "OVERLOADED"
	CodeMessageTooLarge       = "MESSAGE_TOO_LARGE"
	CodeUpstreamTimeout       = "UPSTREAM_TIMEOUT"
)

// StatusClientClosedRequest is the de-facto status (nginx's) for a request
// whose client went away before the answer; no client ever reads it, it
// exists for logs and metrics.
const StatusClientClosedRequest = 499

type entry struct {
	status int
	title  string
}

// catalogue gives every code above its HTTP status and title.
var catalogue = map[string]entry{
	CodeInvalidJSON:           {http.StatusBadRequest, "Malformed JSON body"},
	CodeInvalidArgument:       {http.StatusBadRequest, "Invalid argument"},
	CodeInvalidTimeout:        {http.StatusBadRequest, "Invalid Grpc-Timeout header"},
	CodeIdempotencyKeyMissing: {http.StatusBadRequest, "Idempotency-Key header required"},
	CodeIdempotencyKeyInvalid: {http.StatusBadRequest, "Invalid Idempotency-Key header"},
	CodeOutOfRange:            {http.StatusBadRequest, "Out of range"},
	CodeUnauthenticated:       {http.StatusUnauthorized, "Authentication required"},
	CodeForbidden:             {http.StatusForbidden, "Forbidden"},
	CodePermissionDenied:      {http.StatusForbidden, "Permission denied"},
	CodeRouteNotFound:         {http.StatusNotFound, "No such route"},
	CodeNotFound:              {http.StatusNotFound, "Not found"},
	CodeMethodNotAllowed:      {http.StatusMethodNotAllowed, "Method not allowed"},
	CodeAlreadyExists:         {http.StatusConflict, "Already exists"},
	CodeAborted:               {http.StatusConflict, "Aborted by a concurrent change"},
	CodeFailedPrecondition:    {http.StatusConflict, "Conflicts with the current state"},
	CodeContentTooLarge:       {http.StatusRequestEntityTooLarge, "Request body too large"},
	CodeUnsupportedMediaType:  {http.StatusUnsupportedMediaType, "Unsupported media type"},
	CodeHeadersTooLarge:       {http.StatusRequestHeaderFieldsTooLarge, "Request headers too large"},
	CodeResourceExhausted:     {http.StatusTooManyRequests, "Too many requests"},
	CodeClientClosedRequest:   {StatusClientClosedRequest, "Client closed request"},
	CodeInternal:              {http.StatusInternalServerError, "Internal error"},
	CodeNotImplemented:        {http.StatusNotImplemented, "Not implemented"},
	CodeUpstreamUnavailable:   {http.StatusBadGateway, "Upstream unreachable"},
	CodeServiceUnavailable:    {http.StatusServiceUnavailable, "Service unavailable"},
	CodeCircuitOpen:           {http.StatusServiceUnavailable, "Upstream temporarily disabled"},
	CodeOverloaded:            {http.StatusServiceUnavailable, "Upstream overloaded"},
	CodeMessageTooLarge:       {http.StatusServiceUnavailable, "Message too large"},
	CodeUpstreamTimeout:       {http.StatusGatewayTimeout, "Upstream timed out"},
}

// Catalogue returns the codes the edge may answer with and their HTTP
// statuses, for documentation (the OpenAPI document) and tests.
func Catalogue() map[string]int {
	m := make(map[string]int, len(catalogue))
	for c, e := range catalogue {
		m[c] = e.status
	}
	return m
}
