package problem

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/gen/portico/type/v1/reasons"
)

// Facts are what the edge observed about a failed upstream call besides
// its status.
type Facts struct {
	// Upstream names the route's upstream; it is the default hop of a 504
	// and appears in the edge-written details of 5xx problems.
	Upstream string
	// Header is true when response headers arrived from the upstream.
	Header bool
	// Trailer is true when the status itself arrived from the upstream.
	Trailer bool
	// Field translates a BadRequest field path (proto names) into the
	// request's JSON field path and JSON Pointer. nil keeps it as is.
	Field func(protoPath string) (field, pointer string)
}

// Answered reports whether anything arrived from the upstream.
func (f Facts) Answered() bool { return f.Header || f.Trailer }

// row is one line of the status table.
type row struct {
	status int
	code   string // the problem code, unless the reason replaces it
	reason bool   // an ErrorInfo reason that is one of Codes becomes the code
	refine func(p *Problem, d details, f Facts)
}

// table is THE gRPC code -> HTTP table; package doc renders it. Rows with
// refine depend on the reason or Facts.
var table = map[codes.Code]row{
	codes.InvalidArgument:    {http.StatusBadRequest, CodeInvalidArgument, true, fieldViolations},
	codes.OutOfRange:         {http.StatusBadRequest, CodeOutOfRange, true, fieldViolations},
	codes.Unauthenticated:    {http.StatusUnauthorized, CodeUnauthenticated, true, challenge},
	codes.PermissionDenied:   {http.StatusForbidden, CodePermissionDenied, true, nil},
	codes.NotFound:           {http.StatusNotFound, CodeNotFound, true, nil},
	codes.AlreadyExists:      {http.StatusConflict, CodeAlreadyExists, true, nil},
	codes.Aborted:            {http.StatusConflict, CodeAborted, true, nil},
	codes.FailedPrecondition: {http.StatusConflict, CodeFailedPrecondition, true, failedPrecondition},
	codes.ResourceExhausted:  {http.StatusTooManyRequests, CodeResourceExhausted, true, resourceExhausted},
	codes.Canceled:           {StatusClientClosedRequest, CodeClientClosedRequest, false, canceled},
	codes.Unimplemented:      {http.StatusNotImplemented, CodeNotImplemented, false, unimplemented},
	codes.DeadlineExceeded:   {http.StatusGatewayTimeout, CodeUpstreamTimeout, false, deadlineExceeded},
	codes.Unavailable:        {http.StatusServiceUnavailable, CodeServiceUnavailable, true, unavailable},
	codes.Internal:           {http.StatusInternalServerError, CodeInternal, false, internal},
	codes.Unknown:            {http.StatusInternalServerError, CodeInternal, false, internal},
	codes.DataLoss:           {http.StatusInternalServerError, CodeInternal, false, internal},
}

// FromStatus converts an upstream's gRPC status into a problem. A nil or OK
// status, or a code outside the table, is a 500.
func FromStatus(st *status.Status, f Facts) *Problem {
	r, ok := table[st.Code()]
	if !ok {
		r = table[codes.Internal]
	}
	d := detailsOf(st)
	code := r.code
	if r.reason && isCode(d.reason) {
		code = d.reason
	}
	p := build(code, r.status, "", st.Message())
	if r.refine != nil {
		r.refine(p, d, f)
	}
	p.Title = title(p, r)
	return p
}

// title is the catalogue title of the problem's code; for an upstream
// reason it is the row's title, or the HTTP status text when the reason
// moved the status away from the row's.
func title(p *Problem, r row) string {
	if t := catalogue[p.Code].title; t != "" {
		return t
	}
	if p.Status != r.status {
		return http.StatusText(p.Status)
	}
	return catalogue[r.code].title
}

func fieldViolations(p *Problem, d details, f Facts) {
	for _, v := range d.violations {
		field, pointer := v.GetField(), ""
		if f.Field != nil {
			field, pointer = f.Field(field)
		}
		p.Errors = append(p.Errors, FieldViolation{Field: field, Pointer: pointer, Detail: v.GetDescription()})
	}
	// The upstream's message names proto fields (page_size); say it again
	// with the JSON names the client sent.
	if len(p.Errors) > 0 && p.Errors[0].Field != "" {
		p.Detail = fmt.Sprintf("Invalid %s: %s", p.Errors[0].Field, p.Errors[0].Detail)
		if n := len(p.Errors) - 1; n > 0 {
			p.Detail += fmt.Sprintf(" (and %d more; see errors)", n)
		}
	}
}

func challenge(p *Problem, _ details, _ Facts) { p.Challenge = `Bearer realm="portico"` }

// failedPrecondition refines FAILED_PRECONDITION by reason: a reason sent
// with this code whose portico.type.v1.Reason value has an http_status
// (PAYMENT_DECLINED: 422) gets it; any other is 409 Conflict, the
// resource's current state forbids the call (INSUFFICIENT_STOCK).
func failedPrecondition(p *Problem, d details, _ Facts) {
	if e := catalogue[d.reason]; e.code == codes.FailedPrecondition && e.httpStatus != 0 {
		p.Status = e.httpStatus
	}
	if d.reason == reasons.ETagMismatch && validTag(d.meta["etag"]) {
		p.ETag = d.meta["etag"]
	}
}

// validTag reports whether t can be sent as a strong ETag: a service's
// resource tag is 22 characters of base64url; anything else is not sent.
func validTag(t string) bool {
	if t == "" || len(t) > 64 {
		return false
	}
	for _, c := range []byte(t) {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// resourceExhausted is 429 only for a quota: a status carrying QuotaFailure
// or RetryInfo. Anything else is a message size limit (grpc-go's, on either
// side of the call, which never attaches details): 503 MESSAGE_TOO_LARGE
// with a detail written here, since grpc-go's message names its limits, and
// no Retry-After, since the same call will meet the same limit.
func resourceExhausted(p *Problem, d details, f Facts) {
	if d.quota || d.hasRetry {
		p.RetryAfter = max(seconds(d.retry), 1)
		return
	}
	*p = *build(CodeMessageTooLarge, http.StatusServiceUnavailable, "",
		fmt.Sprintf("A message to or from the %s service exceeded the size limit.", f.Upstream))
}

func deadlineExceeded(p *Problem, d details, f Facts) {
	hop := d.meta["hop"]
	if hop == "" {
		hop = f.Upstream
	}
	*p = *build(CodeUpstreamTimeout, http.StatusGatewayTimeout, "",
		fmt.Sprintf("The gateway stopped waiting for the %s service.", hop))
	p.Hop = hop
}

func unavailable(p *Problem, d details, f Facts) {
	upstream := d.meta["upstream"]
	if upstream == "" {
		upstream = f.Upstream
	}
	switch {
	case d.reason == CodeCircuitOpen:
		*p = *build(CodeCircuitOpen, http.StatusServiceUnavailable, "",
			fmt.Sprintf("Calls to the %s service are paused after repeated failures.", upstream))
		p.Upstream = upstream
		p.RetryAfter = retryAfter(d)
	case d.reason == CodeOverloaded:
		*p = *build(CodeOverloaded, http.StatusServiceUnavailable, "",
			fmt.Sprintf("The %s service is shedding load.", upstream))
		p.Upstream = upstream
		p.RetryAfter = retryAfter(d)
	case !f.Answered():
		*p = *build(CodeUpstreamUnavailable, http.StatusBadGateway, "",
			fmt.Sprintf("The gateway could not reach the %s service.", upstream))
	case isCode(d.reason):
		// A live upstream said why: something behind it is down (the order
		// service's INVENTORY_UNAVAILABLE). Name that, not the upstream.
		p.Detail = fmt.Sprintf("The %s service is up but a service it depends on is unavailable (%s).", f.Upstream, d.reason)
		if d.meta["limit"] == "customer" {
			// It would have kept the request waiting for that service
			// (the order service's Prefer: respond-async) but for the
			// caller's own share of the bound.
			p.Detail += " Your requests already waiting for it are at their limit."
		}
		p.RetryAfter = retryAfter(d)
	default:
		p.Detail = fmt.Sprintf("The %s service is temporarily unavailable.", f.Upstream)
		p.RetryAfter = retryAfter(d)
	}
}

// canceled writes its own detail: the status is almost always grpc-go's
// for the request's context ("context canceled"), a Go error string, and
// the answer goes to a client that half-closed or went away.
func canceled(p *Problem, _ details, _ Facts) {
	p.Detail = "The client closed the request before the answer was ready."
}

// unimplemented writes its own detail: the status is grpc-go's ("unknown
// service portico.order.v1.OrderService", "method X not implemented"),
// which names the upstream's gRPC service and method.
func unimplemented(p *Problem, _ details, f Facts) {
	p.Detail = fmt.Sprintf("The %s service does not implement this operation.", f.Upstream)
}

func internal(p *Problem, _ details, f Facts) {
	*p = *build(CodeInternal, http.StatusInternalServerError, "",
		fmt.Sprintf("The %s service failed unexpectedly; quote the traceId when reporting this.", f.Upstream))
}

// retryAfter is the RetryInfo delay, else CIRCUIT_OPEN's retryAfterMs, else
// 1 second.
func retryAfter(d details) int {
	if d.retry > 0 {
		return seconds(d.retry)
	}
	if ms, err := strconv.ParseInt(d.meta["retryAfterMs"], 10, 64); err == nil && ms > 0 {
		return seconds(time.Duration(ms) * time.Millisecond)
	}
	return 1
}

// seconds rounds d up to whole seconds, minimum 1 (RFC 9110 section 10.2.3
// takes only whole seconds).
func seconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	s := (d + time.Second - 1) / time.Second
	return int(min(max(s, 1), 1<<31-1))
}

// details are the google.rpc details the table looks at.
type details struct {
	reason     string
	meta       map[string]string
	violations []*errdetails.BadRequest_FieldViolation
	retry      time.Duration
	hasRetry   bool // a RetryInfo detail, even with no usable delay
	quota      bool // a QuotaFailure detail
}

func detailsOf(st *status.Status) details {
	var d details
	for _, x := range st.Details() {
		switch v := x.(type) {
		case *errdetails.ErrorInfo:
			if d.reason == "" {
				d.reason, d.meta = v.GetReason(), v.GetMetadata()
			}
		case *errdetails.BadRequest:
			d.violations = append(d.violations, v.GetFieldViolations()...)
		case *errdetails.QuotaFailure:
			d.quota = true
		case *errdetails.RetryInfo:
			d.hasRetry = true
			if v.GetRetryDelay().IsValid() {
				d.retry = v.GetRetryDelay().AsDuration()
			}
		}
	}
	return d
}
