package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/portico-gateway/portico/gateway/answered"
	"github.com/portico-gateway/portico/gateway/deadline"
	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/problem"
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
	w.ex.answered, w.ex.idemKey = rec, key
	fwd := r.Clone(ctx)
	fwd.Method = ep.Method // HEAD runs the GET route
	fwd.URL.RawQuery = query
	fwd.Header = http.Header{}
	fwd.Body, fwd.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	if len(body) > 0 {
		fwd.Header.Set("Content-Type", "application/json")
	}
	return fwd, cancel, nil
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
	d, _, err := deadline.Choose(v, ep.timeout, ep.maxTimeout)
	if err != nil {
		return 0, false, problem.New(problem.CodeInvalidTimeout,
			"Grpc-Timeout must be 1-8 digits and a unit of H, M, S, m, u or n, such as 500m.")
	}
	return d, d >= min(ep.timeout, ep.maxTimeout), nil
}

// readBody reads and validates the body of a route that takes one.
func readBody(w *responseWriter, r *http.Request, ep *endpoint) ([]byte, *problem.Problem) {
	md := ep.BodyMessage()
	if md == nil || r.Body == nil {
		return nil, nil
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
		return nil, problem.New(problem.CodeInvalidArgument, "The request body could not be read.")
	case len(data) == 0:
		return nil, nil
	case !isJSON(r.Header.Get("Content-Type")):
		return nil, problem.New(problem.CodeUnsupportedMediaType, "Send the body as Content-Type: application/json.")
	}
	out, err := jsonwire.Check(md, data)
	if err != nil {
		return nil, bodyProblem(err)
	}
	return out, nil
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
