package problem

import "net/http"

// Codes the edge raises itself or uses when an upstream gave no reason.
const (
	CodeInvalidJSON           = "INVALID_JSON"
	CodeInvalidArgument       = "INVALID_ARGUMENT"
	CodeInvalidTimeout        = "INVALID_TIMEOUT"
	CodeIdempotencyKeyMissing = "IDEMPOTENCY_KEY_MISSING"
	CodeIdempotencyKeyInvalid = "IDEMPOTENCY_KEY_INVALID"
	CodeInvalidConditional    = "INVALID_CONDITIONAL_HEADER"
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
	CodeRateLimitExceeded     = "RATE_LIMIT_EXCEEDED"
	CodeCallerBanned          = "CALLER_BANNED"
	CodeTooManyInFlight       = "TOO_MANY_IN_FLIGHT"
	CodeRequestTimeout        = "REQUEST_TIMEOUT"
	// Authentication failures beyond UNAUTHENTICATED (package gateway/auth).
	CodeMalformedCredentials = "MALFORMED_CREDENTIALS"
	CodeCredentialsExpired   = "CREDENTIALS_EXPIRED"
	CodeRequestReplayed      = "REQUEST_REPLAYED"
	CodeClockSkew            = "CLOCK_SKEW"

	CodeNotAcceptable   = "NOT_ACCEPTABLE"
	CodeTooManyStreams  = "TOO_MANY_STREAMS"
	CodeStreamReconnect = "STREAM_RECONNECT"
)

// StatusClientClosedRequest is the de-facto status (nginx's) for a request
// whose client went away before the answer; no client ever reads it, it
// exists for logs and metrics.
const StatusClientClosedRequest = 499

type entry struct {
	status int
	title  string
	// doc is what the code means to a client, what to do and whether to
	// retry: the text of its page (Pages).
	doc string
}

// catalogue gives every code above its HTTP status, title and page text.
var catalogue = map[string]entry{
	CodeInvalidJSON: {http.StatusBadRequest, "Malformed JSON body",
		"The body is not well-formed JSON; the detail says where. Fix the body. Do not retry unchanged."},
	CodeInvalidArgument: {http.StatusBadRequest, "Invalid argument",
		"A field or parameter is wrong (an unknown field, a wrong type, a value out of range, a broken rule of the operation): errors lists each field (its JSON name and pointer) and what is wrong with it. Correct those fields. Retrying the same request gives the same answer."},
	CodeInvalidTimeout: {http.StatusBadRequest, "Invalid Grpc-Timeout header",
		"The Grpc-Timeout header is malformed: 1 to 8 digits, not all zero, then a unit (H, M, S, m, u or n). Fix or drop the header. Do not retry unchanged."},
	CodeIdempotencyKeyMissing: {http.StatusBadRequest, "Idempotency-Key header required",
		"This operation creates something and needs an Idempotency-Key header, so that a repeated request is not carried out twice. Send a new unique key (a UUID) with each new request, and retry a request with the same key it first had."},
	CodeIdempotencyKeyInvalid: {http.StatusBadRequest, "Invalid Idempotency-Key header",
		"The Idempotency-Key header is sent more than once, or is not 1 to a limited number of printable ASCII characters; the detail gives the limit. Send one valid key. Do not retry unchanged."},
	CodeInvalidConditional: {http.StatusBadRequest, "Invalid conditional request header",
		"If-Match or If-None-Match (the detail names which) is malformed, too long or lists too many entity tags, or is sent where the operation cannot honour it: If-None-Match on anything but a GET, If-Match on a change whose resource has no etag, or several entity tags in If-Match on a change. Send \"*\" or entity tags exactly as an ETag header gave them (\"...\" or W/\"...\"), one for a change. Do not retry unchanged."},
	CodeOutOfRange: {http.StatusBadRequest, "Out of range",
		"A value is outside the range the operation accepts (a page size, a page token past the end). Correct it. Do not retry unchanged."},
	CodeUnauthenticated: {http.StatusUnauthorized, "Authentication required",
		"The request carries no valid credential: no token, an unknown API key, a JWT that does not verify (signature, issuer, audience, not yet valid, unknown key id, too long), or a signature that does not match. Send Authorization: Bearer <API key or JWT>, or sign the request (X-App-Id, X-Timestamp, X-Nonce, X-Signature); retry only with a valid one."},
	CodeMalformedCredentials: {http.StatusBadRequest, "Malformed credentials",
		"The credentials are sent in a way the gateway refuses to read: more than one Authorization header, a token in the query string (access_token), an Authorization header together with signature headers, or signature headers (X-App-Id, X-Timestamp, X-Nonce, X-Signature) missing, repeated or malformed; the detail says which. Fix the request. Do not retry unchanged."},
	CodeCredentialsExpired: {http.StatusUnauthorized, "Credentials expired",
		"The token has expired (its exp), or the API key or app secret is past its not_after. Obtain a fresh token, or switch to the key or secret that replaced it, then retry."},
	CodeRequestReplayed: {http.StatusUnauthorized, "Request replayed",
		"A signed request reused a nonce already seen within the signature window. Sign every request with a new X-Nonce and a current X-Timestamp; a retry too is signed anew, never resent unchanged."},
	CodeClockSkew: {http.StatusUnauthorized, "Timestamp outside the window",
		"A signed request's X-Timestamp is too far (300 seconds unless configured) from the gateway's clock; the detail gives the gateway's time. Synchronise the client's clock (NTP), then retry signed again with a current timestamp and a new nonce; retrying unchanged fails again."},
	CodeForbidden: {http.StatusForbidden, "Forbidden",
		"The credential is valid but none of its roles may use this operation (a read-only token writing, or an operation the policy grants to nobody). Use a credential with a role the operation's description names. Retrying with the same one fails again."},
	CodePermissionDenied: {http.StatusForbidden, "Permission denied",
		"The caller may not do this to this resource (a customer acting on another's order, a role without the right). Use credentials that may. Retrying with the same ones fails again."},
	CodeRouteNotFound: {http.StatusNotFound, "No such route",
		"No operation matches the method's path; /openapi.json lists the operations. Fix the path. Do not retry."},
	CodeNotFound: {http.StatusNotFound, "Not found",
		"The resource does not exist, or is not visible to the caller. Check the identifier. Do not retry unchanged."},
	CodeMethodNotAllowed: {http.StatusMethodNotAllowed, "Method not allowed",
		"The path exists but not with this method; the Allow header lists the methods it takes. Use one of them. Do not retry unchanged."},
	CodeAlreadyExists: {http.StatusConflict, "Already exists",
		"A resource with this identity exists already. Read or change it instead. Retrying the create fails the same way."},
	CodeAborted: {http.StatusConflict, "Aborted by a concurrent change",
		"The call lost a race with a concurrent change to the same resource. Read the resource again, then retry the change if it still applies."},
	CodeFailedPrecondition: {http.StatusConflict, "Conflicts with the current state",
		"The resource's current state forbids the operation. Read it and decide whether the operation still applies. Retrying unchanged fails until the state changes."},
	CodeContentTooLarge: {http.StatusRequestEntityTooLarge, "Request body too large",
		"The request body (decoded, when gzip) is larger than the gateway accepts (1 MiB unless configured). Send a smaller body. Do not retry unchanged."},
	CodeUnsupportedMediaType: {http.StatusUnsupportedMediaType, "Unsupported media type",
		"The body is not sent as Content-Type: application/json, or with a content coding other than gzip (Accept-Encoding in the answer lists what is accepted). Fix the headers. Do not retry unchanged."},
	CodeHeadersTooLarge: {http.StatusRequestHeaderFieldsTooLarge, "Request headers too large",
		"The request line and headers are larger than the gateway accepts. Send fewer or shorter headers (cookies, long tokens). Do not retry unchanged."},
	CodeResourceExhausted: {http.StatusTooManyRequests, "Too many requests",
		"A quota or rate limit is used up for now. Wait the seconds in Retry-After (the same as retryAfter), then retry; retrying sooner is refused again."},
	CodeRateLimitExceeded: {http.StatusTooManyRequests, "Rate limit exceeded",
		"The gateway's rate limit for this caller, this group of operations or the whole gateway is used up for now (layer names which; RateLimit and X-RateLimit-* say what is left); the request did not reach any service. Wait the seconds in Retry-After, then retry; retrying sooner is refused again and counts towards a ban."},
	CodeCallerBanned: {http.StatusTooManyRequests, "Caller temporarily banned",
		"The caller's requests were refused by rate limits so often that the gateway refuses all of them for a while; nothing reached any service. Stop, fix the client's request rate, and retry after the seconds in Retry-After."},
	CodeNotAcceptable: {http.StatusNotAcceptable, "Not acceptable",
		"The Accept header names no media type the operation can answer with. A streaming operation answers application/x-ndjson (the default) or text/event-stream; send one of them, or */*, or no Accept. Do not retry unchanged."},
	CodeTooManyStreams: {http.StatusTooManyRequests, "Too many open streams",
		"This caller already has as many streams open as the gateway allows one caller (streams.max_per_caller). Close a stream you no longer read, then retry after Retry-After."},
	CodeStreamReconnect: {http.StatusServiceUnavailable, "Stream ended; reconnect",
		"The gateway ended the stream: it is shutting down, the stream reached its longest duration, or the upstream sent nothing for too long. Nothing is wrong with the request: retry, opening the stream again after Retry-After (another gateway instance answers while this one stops)."},
	CodeTooManyInFlight: {http.StatusTooManyRequests, "Too many requests in flight",
		"This client address has too many requests whose bodies are still arriving, or this caller has too many requests the gateway is working on; the request did not reach any service. Wait for some to finish (the seconds in Retry-After), then retry; send bodies promptly."},
	CodeRequestTimeout: {http.StatusRequestTimeout, "Request body too slow",
		"The request body did not arrive in time: the gateway reads it whole before any other work, within a deadline and at a minimum average rate (10 seconds and 1024 bytes a second unless configured). The connection is closed. Send the body promptly, right after the headers, then retry; a create is safe to retry with the same Idempotency-Key."},
	CodeClientClosedRequest: {StatusClientClosedRequest, "Client closed request",
		"The client went away (it cancelled or timed out) before the answer; no client reads this, it is logged and counted. To learn the outcome of a create, retry it with the same Idempotency-Key."},
	CodeInternal: {http.StatusInternalServerError, "Internal error",
		"The service failed unexpectedly; the detail is generic and the real error is logged. Quote the traceId when reporting it. A read may be retried; retry a create only with the same Idempotency-Key, so it is not carried out twice."},
	CodeNotImplemented: {http.StatusNotImplemented, "Not implemented",
		"This deployment does not implement the operation. Do not retry."},
	CodeUpstreamUnavailable: {http.StatusBadGateway, "Upstream unreachable",
		"The gateway could not reach the service behind the operation: nothing answered. Retry after a short backoff; a create is safe to retry with the same Idempotency-Key."},
	CodeServiceUnavailable: {http.StatusServiceUnavailable, "Service unavailable",
		"The service answered that it is temporarily unavailable. Retry after the seconds in Retry-After, backing off if it happens again."},
	CodeCircuitOpen: {http.StatusServiceUnavailable, "Upstream temporarily disabled",
		"The gateway has paused calls to the service (upstream names it) after repeated failures, and did not call it. Retry after the seconds in Retry-After, when a trial call may resume them."},
	CodeOverloaded: {http.StatusServiceUnavailable, "Overloaded",
		"A limit of concurrent requests is reached: the gateway's own, a route group's, or its limit of calls to the service that upstream names; the request was not carried out. Retry after the seconds in Retry-After, backing off if it happens again."},
	CodeMessageTooLarge: {http.StatusServiceUnavailable, "Message too large",
		"A message to or from the service is larger than a size limit (often an answer too large: ask for a smaller page). Do not retry the same call: it meets the same limit."},
	CodeUpstreamTimeout: {http.StatusGatewayTimeout, "Upstream timed out",
		"A service did not answer in time (hop names it); the outcome is unknown. A read may be retried, with a longer Grpc-Timeout if you sent one; retry a create with the same Idempotency-Key, which returns its first outcome instead of carrying it out twice."},
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
