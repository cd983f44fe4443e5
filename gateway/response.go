package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/portico-gateway/portico/gateway/answered"
	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gen/portico/type/v1/reasons"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/prefer"
)

// newMux builds grpc-gateway's mux with the edge's hooks: nothing a client
// sends becomes metadata except what annotate sets, nothing an upstream
// sends becomes a header except Idempotent-Replayed, and every error goes
// through the status table. c numbers its registrations for the direct
// calls (direct.go), which assume the options below as they are: no path
// length fallback or method override, the unescaping mode muxUnescaping,
// no strict deep wildcards.
func (s *Server) newMux(c *muxCapture) *runtime.ServeMux {
	none := func(string) (string, bool) { return "", false }
	return runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, jsonwire.NewMarshaler()),
		runtime.WithIncomingHeaderMatcher(none),
		runtime.WithOutgoingHeaderMatcher(outgoingHeader),
		runtime.WithOutgoingTrailerMatcher(none),
		runtime.WithMetadata(s.annotate),
		runtime.WithErrorHandler(s.handleError),
		runtime.WithRoutingErrorHandler(s.handleRoutingError),
		runtime.WithForwardResponseOption(forwardOption),
		runtime.WithDisablePathLengthFallback(),
		runtime.WithDisableHTTPMethodOverride(),
		runtime.WithUnescapingMode(muxUnescaping),
		runtime.WithMiddlewares(c.middleware),
	)
}

// replayedKey is the response header metadata the order service sets on an
// idempotent replay.
const replayedKey = callmeta.ReplayedKey

// outgoingHeader maps upstream response metadata to HTTP headers: only the
// replay marker passes, as Idempotent-Replayed.
func outgoingHeader(key string) (string, bool) {
	if strings.EqualFold(key, replayedKey) {
		return "Idempotent-Replayed", true
	}
	return "", false
}

// annotate is the only source of upstream metadata besides the trace id
// (client interceptor) and grpc-gateway's x-forwarded-host/-for, which it
// derives from the connection: the verified principal (setPrincipal) and
// the idempotency key of routes that take one, the If-Match tag of routes
// that forward it (conditional.go), and "prefer: respond-async" when the
// client asked for it on a route that honours it (async.go).
// Authorization is never forwarded.
func (s *Server) annotate(ctx context.Context, _ *http.Request) metadata.MD {
	ex := exchangeFrom(ctx)
	md := metadata.MD{}
	s.setPrincipal(md, ex)
	if ex.idemKey != "" {
		md.Set(callmeta.IdempotencyKey, ex.idemKey)
	}
	if ex.cond.forward != "" {
		md.Set(callmeta.IfMatchKey, ex.cond.forward)
	}
	if ex.async {
		md.Set(prefer.MetadataKey, prefer.RespondAsync)
	}
	return md
}

// forwardOption sets a GET answer's ETag and judges its conditions
// (conditional.go), and marks a create's answer as 201 with its Location,
// or 202 when the upstream applied respond-async.
func forwardOption(ctx context.Context, w http.ResponseWriter, resp proto.Message) error {
	ex := exchangeFrom(ctx)
	if err := judge(w, ex, resp); err != nil {
		return err
	}
	if ex.ep == nil || ex.ep.location == nil || resp == nil {
		return nil
	}
	ex.created = true
	ex.location, _ = ex.ep.location.expand(resp)
	ex.accepted = ex.async && asyncApplied(ctx)
	return nil
}

// handleError answers every error of a forwarded call.
// An upstream failure of a route that keeps copies may be answered by a
// kept copy instead (stale.go).
func (s *Server) handleError(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if s.answerCondition(w, r, err) {
		return
	}
	ex := exchangeFrom(ctx)
	p := s.problemFor(ex, err)
	if ex.cond.neverMatch && p.Code == reasons.ETagMismatch {
		p.Detail = neverMatchDetail
	}
	if ex.stale != nil && s.serveStale(w, r, ex, p) {
		return
	}
	s.writeProblem(w, r, p)
}

func (s *Server) problemFor(ex *exchange, err error) *problem.Problem {
	var hs *runtime.HTTPStatusError
	if errors.As(err, &hs) {
		return problem.New(problem.CodeInvalidArgument, "The request path is malformed.")
	}
	st, ok := status.FromError(err)
	if !ok {
		ex.logErr = err.Error()
		return problem.New(problem.CodeInternal, "The gateway failed to answer; quote the traceId when reporting this.")
	}
	rec := ex.answered
	if rec == nil {
		rec = &answered.Record{}
	}
	if !rec.Began() && st.Code() == codes.InvalidArgument && len(st.Details()) == 0 {
		// grpc-gateway failed to decode or bind the request before any
		// call; its message quotes its own, protojson's and strconv's
		// internals.
		if p := bodyError(ex); p != nil {
			return p
		}
		ex.logErr = st.Message()
		return problem.New(problem.CodeInvalidArgument, "The request does not fit the operation's parameters.")
	}
	s.metrics.UpstreamError(ex.upstream, st.Code())
	p := problem.FromStatus(st, problem.Facts{
		Upstream: ex.upstream,
		Header:   rec.Header(),
		Trailer:  rec.Trailer(),
		Field:    fieldTranslator(ex.ep),
	})
	if p.Status >= http.StatusInternalServerError {
		ex.logErr = st.Code().String() + ": " + st.Message()
	}
	return p
}

// fieldTranslator renders BadRequest field paths in the JSON names the
// client used; for a route whose body is one field ("item"), paths inside
// it are relative to the body.
func fieldTranslator(ep *endpoint) func(string) (string, string) {
	if ep == nil {
		return nil
	}
	return func(protoPath string) (string, string) {
		field, pointer := jsonwire.FieldPath(ep.Input, protoPath)
		if ep.Body == "" || ep.Body == "*" {
			return field, pointer
		}
		bf := ep.Input.Fields().ByName(protoreflect.Name(ep.Body)).JSONName()
		if rest, ok := strings.CutPrefix(field, bf+"."); ok {
			return rest, "#" + strings.TrimPrefix(pointer, "#/"+bf)
		}
		return field, pointer
	}
}

// handleRoutingError answers grpc-gateway's own routing failures; the
// edge matched the route already, so these mean the two disagree.
func (s *Server) handleRoutingError(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	ex := exchangeFrom(ctx)
	ex.logErr = "grpc-gateway routing error " + http.StatusText(httpStatus)
	code := problem.CodeRouteNotFound
	if httpStatus == http.StatusBadRequest {
		code = problem.CodeInvalidArgument
	}
	s.writeProblem(w, r, problem.New(code, "No route matches "+r.URL.EscapedPath()+"."))
}
