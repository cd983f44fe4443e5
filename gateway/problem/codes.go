package problem

import (
	"slices"

	"google.golang.org/grpc/codes"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/gen/portico/type/v1/reasons"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Codes the edge raises itself or uses when an upstream gave no reason.
// Each is a portico.type.v1.Reason with a title option, whose constant
// package reasons holds (generated from the enum, which alone spells it).
const (
	CodeInvalidJSON           = reasons.InvalidJSON
	CodeInvalidArgument       = reasons.InvalidArgument
	CodeInvalidTimeout        = reasons.InvalidTimeout
	CodeIdempotencyKeyMissing = reasons.IdempotencyKeyMissing
	CodeIdempotencyKeyInvalid = reasons.IdempotencyKeyInvalid
	CodeInvalidConditional    = reasons.InvalidConditionalHeader
	CodeOutOfRange            = reasons.OutOfRange
	CodeUnauthenticated       = reasons.Unauthenticated
	CodeForbidden             = reasons.Forbidden
	CodePermissionDenied      = reasons.PermissionDenied
	CodeRouteNotFound         = reasons.RouteNotFound
	CodeNotFound              = reasons.NotFound
	CodeMethodNotAllowed      = reasons.MethodNotAllowed
	CodeAlreadyExists         = reasons.AlreadyExists
	CodeAborted               = reasons.Aborted
	CodeFailedPrecondition    = reasons.FailedPrecondition
	CodeContentTooLarge       = reasons.ContentTooLarge
	CodeUnsupportedMediaType  = reasons.UnsupportedMediaType
	CodeHeadersTooLarge       = reasons.RequestHeaderFieldsTooLarge
	CodeResourceExhausted     = reasons.ResourceExhausted
	CodeClientClosedRequest   = reasons.ClientClosedRequest
	CodeInternal              = reasons.Internal
	CodeNotImplemented        = reasons.NotImplemented
	CodeUpstreamUnavailable   = reasons.UpstreamUnavailable
	CodeServiceUnavailable    = reasons.ServiceUnavailable
	CodeCircuitOpen           = reasons.CircuitOpen
	CodeOverloaded            = reasons.Overloaded
	CodeMessageTooLarge       = reasons.MessageTooLarge
	CodeUpstreamTimeout       = reasons.UpstreamTimeout
	CodeRateLimitExceeded     = reasons.RateLimitExceeded
	CodeCallerBanned          = reasons.CallerBanned
	CodeTooManyInFlight       = reasons.TooManyInFlight
	CodeRequestTimeout        = reasons.RequestTimeout
	// Authentication failures beyond UNAUTHENTICATED (package gateway/auth).
	CodeMalformedCredentials = reasons.MalformedCredentials
	CodeCredentialsExpired   = reasons.CredentialsExpired
	CodeRequestReplayed      = reasons.RequestReplayed
	CodeClockSkew            = reasons.ClockSkew

	CodeNotAcceptable   = reasons.NotAcceptable
	CodeTooManyStreams  = reasons.TooManyStreams
	CodeStreamReconnect = reasons.StreamReconnect

	// Requests net/http could not read (package gateway/canned).
	CodeMalformedRequest        = reasons.MalformedRequest
	CodeHTTPVersionNotSupported = reasons.HTTPVersionNotSupported
	CodeExpectationFailed       = reasons.ExpectationFailed
)

// StatusClientClosedRequest is the de-facto status (nginx's) for a request
// whose client went away before the answer; no client ever reads it, it
// exists for logs and metrics.
const StatusClientClosedRequest = 499

// entry is what portico.type.v1.Reason says of one problem code.
type entry struct {
	// httpStatus is the http_status option: the status when it is not the
	// status table's for code, and the status of a code without one.
	httpStatus int
	// title is the title option: set on the edge's own codes only.
	title string
	// doc is what the code means to a client, what to do and whether to
	// retry: the text of its page (Pages).
	doc string
	// code is the grpc_code option: the gRPC code a service sends the
	// reason with; Unknown for a code no service sends (INVALID_JSON).
	code codes.Code
}

// status is the HTTP status problems with the code are answered: its
// http_status option, else the status table's for its grpc_code. It is
// looked up here, not when catalogue is read, because the table's rows
// read catalogue.
func (e entry) status() int {
	if e.httpStatus != 0 {
		return e.httpStatus
	}
	return table[e.code].status
}

// catalogue holds every problem code: every Reason with a doc option. The
// edge's own codes are those with a title.
var catalogue = readCatalogue()

// readCatalogue reads catalogue from the enum's options.
func readCatalogue() map[string]entry {
	m := map[string]entry{}
	values := typev1.Reason(0).Descriptor().Values()
	for i := 0; i < values.Len(); i++ {
		r := typev1.Reason(values.Get(i).Number())
		if doc := rpcerr.ReasonDoc(r); doc != "" { // else never a problem code (FromStatus leaves the row's)
			m[rpcerr.ReasonName(r)] = entry{rpcerr.ReasonHTTPStatus(r), rpcerr.ReasonTitle(r), doc, rpcerr.ReasonCode(r)}
		}
	}
	return m
}

// Catalogue returns the edge's own codes and their HTTP statuses, for
// documentation (the OpenAPI document) and tests.
func Catalogue() map[string]int {
	m := make(map[string]int, len(catalogue))
	for c, e := range catalogue {
		if e.title != "" {
			m[c] = e.status()
		}
	}
	return m
}

// Codes returns every code an edge problem can carry, sorted: every
// portico.type.v1.Reason with a doc, which holds the edge's own codes
// (every code the status table gives without a reason among them) and the
// services' reasons. An upstream reason outside them never becomes a code
// (FromStatus).
func Codes() []string {
	out := make([]string, 0, len(catalogue))
	for c := range catalogue {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// isCode reports whether s is one of Codes.
func isCode(s string) bool {
	_, ok := catalogue[s]
	return ok
}
