package gateway

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/portico-gateway/portico/gateway/answered"
	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/timeout"
	chaindeadline "github.com/portico-gateway/portico/interceptors/deadline"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// prepare checks what the route needs from the request and builds the
// request grpc-gateway sees: the route's deadline and an answered.Record
// in its context, the validated body, and no client headers but
// Content-Type. grpc-gateway forwards Authorization, X-Forwarded-* and
// Grpc-Timeout on its own, so dropping the headers here is what keeps
// them from reaching upstreams; what upstreams do get is set by annotate.
func (s *Server) prepare(w *responseWriter, r *http.Request, ep *endpoint) (*http.Request, context.CancelFunc, *problem.Problem) {
	if !utf8.ValidString(r.URL.Path) {
		// Path variables become proto strings, which must be UTF-8; the
		// gRPC client would refuse to marshal them (a 500).
		return nil, nil, problem.New(problem.CodeInvalidArgument, "The request path is not valid UTF-8.")
	}
	key, p := idempotencyKey(r, ep)
	if p != nil {
		return nil, nil, p
	}
	cond, p := preconditions(r, ep)
	if p != nil {
		return nil, nil, p
	}
	w.ex.cond = cond
	if w.ex.async, p = respondAsync(r, ep); p != nil {
		return nil, nil, p
	}
	timeout, own, p := routeTimeout(r, ep)
	if p != nil {
		return nil, nil, p
	}
	query, p := checkQuery(ep, r.URL.RawQuery)
	if p != nil {
		return nil, nil, p
	}
	body, p := readBody(w, r, ep)
	if p != nil {
		return nil, nil, p
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	if own {
		ctx = chaindeadline.WithUpstreamDeadline(ctx)
	}
	w.ex.byClient = !own
	ctx, rec := answered.NewContext(ctx)
	w.ex.answered, w.ex.idemKey, w.ex.body = rec, key, body
	return forwarded(ctx, r, ep.Method, query, body), cancel, nil
}

// forwarded is the request grpc-gateway sees: a shallow copy of r (r.Clone
// would deep-copy the client's header map only for it to be replaced)
// with its own URL, method, query and body, no form, no trailer, and no
// header but the Content-Type of a body. Nothing downstream writes the
// fields it shares with r (the URL's Userinfo, TransferEncoding).
func forwarded(ctx context.Context, r *http.Request, method, query string, body []byte) *http.Request {
	f := &forwardedRequest{req: *r.WithContext(ctx), url: *r.URL}
	fwd := &f.req
	fwd.URL = &f.url
	fwd.Method = method // HEAD runs the GET route
	fwd.URL.RawQuery = query
	fwd.Form, fwd.PostForm, fwd.MultipartForm, fwd.Trailer = nil, nil, nil, nil
	if len(body) == 0 {
		fwd.Header, fwd.Body, fwd.ContentLength = http.Header{}, http.NoBody, 0
		return fwd
	}
	fwd.Header = http.Header{"Content-Type": {"application/json"}}
	fwd.Body, fwd.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return fwd
}

// forwardedRequest holds the forwarded request and its URL: one
// allocation for both.
type forwardedRequest struct {
	req http.Request
	url url.URL
}

// idempotencyKey returns the route's required Idempotency-Key.
func idempotencyKey(r *http.Request, ep *endpoint) (string, *problem.Problem) {
	if !ep.idempotencyKey {
		return "", nil
	}
	vs := r.Header.Values("Idempotency-Key")
	if len(vs) == 0 {
		return "", problem.New(problem.CodeIdempotencyKeyMissing,
			"This operation needs an Idempotency-Key header so it can be retried safely.")
	}
	if len(vs) > 1 || !callmeta.ValidIdempotencyKey(vs[0]) {
		return "", problem.New(problem.CodeIdempotencyKeyInvalid,
			"Idempotency-Key must be sent once, as 1-"+strconv.Itoa(callmeta.MaxIdempotencyKeyLen)+" printable ASCII characters.")
	}
	return vs[0], nil
}

// routeTimeout returns how long to wait for the upstream.
//
// own reports that the deadline is the route's configured budget (the
// client sent no Grpc-Timeout, or one no shorter than the route's): when it
// runs out, the upstream was too slow, and the client chain's breaker counts
// it. A shorter client deadline is the client's choice and never counts.
func routeTimeout(r *http.Request, ep *endpoint) (d time.Duration, own bool, _ *problem.Problem) {
	vs := r.Header.Values("Grpc-Timeout")
	if len(vs) > 1 {
		return 0, false, problem.New(problem.CodeInvalidTimeout, "Send Grpc-Timeout at most once.")
	}
	v := ""
	if len(vs) == 1 {
		v = vs[0]
	}
	d, _, err := timeout.Choose(v, ep.timeout, ep.maxTimeout)
	if errors.Is(err, timeout.ErrZero) {
		return 0, false, problem.New(problem.CodeInvalidTimeout,
			"Grpc-Timeout must not be zero: send a positive timeout, such as 500m, or none for the route's default.")
	}
	if err != nil {
		return 0, false, problem.New(problem.CodeInvalidTimeout,
			"Grpc-Timeout must be 1-8 digits and a unit of H, M, S, m, u or n, such as 500m.")
	}
	return d, d >= min(ep.timeout, ep.maxTimeout), nil
}

// readBody reads and decodes the body of a route that takes one. The body
// limit bounds the body as sent and, for gzip, once decoded. The JSON is
// parsed once, by the edge's marshaler when grpc-gateway decodes the
// request; a body it rejects is explained by bodyError. (On a whole-body
// route with path variables and on an update whose mask the body implies,
// a body other than {} also has its top-level keys read: checkMembers.)
func readBody(w *responseWriter, r *http.Request, ep *endpoint) ([]byte, *problem.Problem) {
	md := ep.BodyMessage()
	if md == nil || r.Body == nil {
		return nil, nil
	}
	gzipped, p := contentCoding(w, r)
	if p != nil {
		return nil, p
	}
	tooLarge := problem.New(problem.CodeContentTooLarge,
		"The request body exceeds "+strconv.FormatInt(ep.maxBody, 10)+" bytes.")
	if r.ContentLength > ep.maxBody {
		return nil, tooLarge
	}
	data, err := io.ReadAll(http.MaxBytesReader(w.ResponseWriter, r.Body, ep.maxBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge
	case err != nil:
		closeAfter(w) // a framing error: what follows cannot be trusted
		return nil, problem.New(problem.CodeInvalidArgument, "The request body could not be read.")
	case len(data) == 0:
		return nil, checkMembers(ep, r, nil) // an update must still set something
	case !isJSON(r.Header.Get("Content-Type")):
		return nil, problem.New(problem.CodeUnsupportedMediaType, "Send the body as Content-Type: application/json.")
	}
	if gzipped {
		if data, p = gunzip(data, ep.maxBody); p != nil {
			return nil, p
		}
	}
	if p := checkMembers(ep, r, data); p != nil {
		return nil, p
	}
	return data, nil
}

// acceptedEncodings is what a 415 for a content coding offers in
// Accept-Encoding (RFC 9110 section 12.5.3).
const acceptedEncodings = "gzip"

// contentCoding reports whether the body is gzip: one coding, gzip or
// x-gzip (RFC 9110 section 8.4.1.3), any case; none or identity is a plain
// body. Anything else (br, deflate, unknown or stacked codings) is 415
// rather than guessed at: parsing an encoded body as JSON would answer
// with a misleading error, or worse, accept a body the client did not
// mean.
func contentCoding(w http.ResponseWriter, r *http.Request) (gzipped bool, _ *problem.Problem) {
	vs := r.Header.Values("Content-Encoding")
	if len(vs) == 0 {
		return false, nil
	}
	var codings []string
	for _, v := range vs {
		for c := range strings.SplitSeq(v, ",") {
			codings = append(codings, strings.ToLower(strings.TrimSpace(c)))
		}
	}
	if len(codings) == 1 {
		switch codings[0] {
		case "identity":
			return false, nil
		case "gzip", "x-gzip":
			return true, nil
		}
	}
	w.Header().Set("Accept-Encoding", acceptedEncodings)
	return false, problem.New(problem.CodeUnsupportedMediaType,
		"Send the body unencoded or with Content-Encoding: gzip (one coding); no other content coding is accepted.")
}

// gunzip decodes a gzip body, at most limit bytes of it: a body that
// inflates past the limit (a zip bomb) is 413, and nothing more than
// limit+1 bytes is ever inflated.
func gunzip(data []byte, limit int64) ([]byte, *problem.Problem) {
	notGzip := problem.New(problem.CodeInvalidArgument, "The body is labelled Content-Encoding: gzip but is not valid gzip.")
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, notGzip
	}
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	switch {
	case int64(len(out)) > limit:
		return nil, problem.New(problem.CodeContentTooLarge,
			"The request body exceeds "+strconv.FormatInt(limit, 10)+" bytes once decoded.")
	case err != nil:
		return nil, notGzip
	}
	return out, nil
}

// bodyError explains why grpc-gateway could not decode the request: the
// body's problem with its field path, or nil when the body is fine (the
// path or query did not bind). It walks the body again, on this error
// path only.
func bodyError(ex *exchange) *problem.Problem {
	if len(ex.body) == 0 || ex.ep == nil || ex.ep.BodyMessage() == nil {
		return nil
	}
	if _, err := jsonwire.Check(ex.ep.BodyMessage(), ex.body); err != nil {
		return bodyProblem(err)
	}
	return nil
}

func bodyProblem(err error) *problem.Problem {
	var je *jsonwire.Error
	if !errors.As(err, &je) {
		return problem.New(problem.CodeInvalidJSON, "The body is not valid JSON.")
	}
	code := problem.CodeInvalidArgument
	if je.Syntax {
		code = problem.CodeInvalidJSON
	}
	p := problem.New(code, "The body is not valid: "+je.Error()+".")
	if je.Field != "" {
		p.Errors = []problem.FieldViolation{{Field: je.Field, Pointer: je.Pointer, Detail: je.Msg}}
	}
	return p
}

// isJSON accepts application/json and any +json type, with no charset or
// utf-8 (RFC 8259 section 8.1: JSON is UTF-8).
func isJSON(ct string) bool {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !(mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}
