// Package problem writes the edge's error responses as RFC 9457 problem
// details (https://www.rfc-editor.org/rfc/rfc9457) and holds the one table
// that turns a gRPC status from an upstream into one.
//
// Every problem has the standard members type, title, status, detail and
// instance, plus Portico's extension members:
//
//	code        stable UPPER_SNAKE identifier clients branch on, e.g. UPSTREAM_TIMEOUT
//	traceId     the request's trace id, also echoed in X-Trace-Id
//	errors      field violations: [{"field":"lines[0].quantity","pointer":"#/lines/0/quantity","detail":"..."}]
//	hop         504 only: the upstream that did not answer in time
//	upstream    502/503 from the resilience chain: the upstream concerned
//	retryAfter  seconds, the same value as the Retry-After header
//
// # The type URI
//
// The type member is a URI reference per code: /problems/ followed by the
// code in lower kebab case (UPSTREAM_TIMEOUT -> /problems/upstream-timeout).
// RFC 9457 section 3.1.1 resolves a relative type against the request URI
// and asks that a relative one carry the full path, as this one does; so
// https://edge.example/api/orders/o-1 answers a type that resolves to
// https://edge.example/problems/upstream-timeout, a page the edge itself
// serves without a token (Pages). That is the default, because an absolute
// base names one host, which every deployment would have to configure and
// serve; the edge is the one entry every client already reaches. Behind an
// ingress that serves the edge under a path prefix or another host the
// relative type resolves off the edge, so the edge's problems.type_base
// sets an absolute base instead (Problem.Rebase).
//
// Codes lists every code a problem can carry; Pages gives each the text of
// its page. Both are read from the proto enum portico.type.v1.Reason, the
// one list of reasons (proto/portico/type/v1/reason.proto): a value with a
// doc option is a code and the doc is its page's text; a value with a
// title option is one of the edge's own codes (the catalogue, codes.go),
// with that title and the status of its http_status option. Each text says
// whether to retry; the tests fail for a code without one.
//
// # The status table
//
// FromStatus is the only place a gRPC code becomes an HTTP status. It
// branches on codes, ErrorInfo reasons and Facts the edge observed, never on
// messages:
//
//	gRPC code            condition                                 HTTP  code
//	INVALID_ARGUMENT                                               400   reason or INVALID_ARGUMENT, errors from BadRequest
//	OUT_OF_RANGE                                                   400   reason or OUT_OF_RANGE
//	UNAUTHENTICATED                                                401   reason or UNAUTHENTICATED, WWW-Authenticate: Bearer
//	PERMISSION_DENIED                                              403   reason or PERMISSION_DENIED
//	NOT_FOUND                                                      404   reason or NOT_FOUND
//	ALREADY_EXISTS                                                 409   reason or ALREADY_EXISTS
//	ABORTED                                                        409   reason or ABORTED
//	FAILED_PRECONDITION  a reason with an http_status (PAYMENT_DECLINED, ...)  that status  reason
//	FAILED_PRECONDITION  any other reason (INSUFFICIENT_STOCK, ...) 409  reason or FAILED_PRECONDITION
//	RESOURCE_EXHAUSTED   with QuotaFailure or RetryInfo (a quota)  429   reason or RESOURCE_EXHAUSTED, Retry-After
//	RESOURCE_EXHAUSTED   without them (a message size limit)       503   MESSAGE_TOO_LARGE, no Retry-After
//	CANCELLED                                                      499   CLIENT_CLOSED_REQUEST (the client is gone)
//	UNIMPLEMENTED                                                  501   NOT_IMPLEMENTED
//	DEADLINE_EXCEEDED    upstream's, the resilience chain's or the edge's own deadline  504  UPSTREAM_TIMEOUT, hop
//	UNAVAILABLE          reason CIRCUIT_OPEN                       503   CIRCUIT_OPEN, Retry-After, upstream
//	UNAVAILABLE          reason OVERLOADED                         503   OVERLOADED, Retry-After
//	UNAVAILABLE          the upstream never answered               502   UPSTREAM_UNAVAILABLE
//	UNAVAILABLE          a live upstream answered UNAVAILABLE      503   reason or SERVICE_UNAVAILABLE, Retry-After
//	INTERNAL, UNKNOWN, DATA_LOSS, anything else                    500   INTERNAL, generic detail
//
// "Reason" is the google.rpc.ErrorInfo reason when it is one of Codes (a
// portico.type.v1.Reason with a doc); any other reason (a newer service's,
// an injected fault's FAULT_INJECTED) leaves the row's code, so every
// problem's code is in Codes and its type URI has a page. The
// services' reasons, and the HTTP status of the FAILED_PRECONDITION ones
// that are not 409 (http_status), are defined once in the proto enum
// portico.type.v1.Reason; docs/errors.md's table of reasons is generated
// from it (TestDocReasons). 4xx
// problems carry the upstream's message as detail; 5xx problems carry a
// detail written by the edge, because upstream messages for those codes are
// grpc-go internals (dial errors, addresses) or server bugs. The caller logs
// the real message. A 503 whose ErrorInfo metadata has limit "customer"
// (the order service refusing to keep one more of the caller's orders
// waiting, --max-accepted-per-customer) says so in its detail.
//
// Retry-After (and retryAfter) comes from google.rpc.RetryInfo, rounded up to
// whole seconds with a minimum of 1; for CIRCUIT_OPEN without RetryInfo from
// the ErrorInfo metadata retryAfterMs. Every 429 and every 503 but
// MESSAGE_TOO_LARGE has one: 1 second when the upstream gave no hint. A
// message that passed a size limit passes it again, so there is no retry to
// advise.
//
// # Answered or made up
//
// Whether the upstream answered is a structural fact, recorded by a gRPC
// stats handler (package answered), never guessed from error text:
// Facts.Header is set when response headers arrived, Facts.Trailer when the
// status itself arrived from the upstream. UNAVAILABLE with neither is 502:
// nothing answered (refused connection, no route, TLS failure).
//
// RESOURCE_EXHAUSTED is a quota only when the status says so with a
// QuotaFailure or RetryInfo detail. grpc-go's message size limits (the
// edge's client refusing to send or receive, or the upstream's server
// refusing to send its own answer, which then arrives trailers-only) carry
// no details, and their messages name internal limits, so they become 503
// MESSAGE_TOO_LARGE with a detail written by the edge, whoever hit the limit.
//
// Problems are plain values; Write is safe to call from any goroutine with
// its own ResponseWriter.
package problem
