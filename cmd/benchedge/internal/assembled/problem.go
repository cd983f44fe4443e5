package assembled

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// problem is an RFC 9457 problem details body, the members the edge
// sends.
type problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	Code     string `json:"code"`
	TraceID  string `json:"traceId,omitempty"`
}

// titles are the problem titles of the codes this stack sends.
var titles = map[string]string{
	"UNAUTHENTICATED":     "Authentication required",
	"FORBIDDEN":           "Forbidden",
	"PERMISSION_DENIED":   "Permission denied",
	"NOT_FOUND":           "Not found",
	"INVALID_ARGUMENT":    "Invalid argument",
	"OVERLOADED":          "Overloaded",
	"SERVICE_UNAVAILABLE": "Service unavailable",
	"UPSTREAM_TIMEOUT":    "Upstream timeout",
	"INTERNAL":            "Internal error",
}

// problemHandler is the mux's runtime.ErrorHandlerFunc: every error, the
// upstream's and the middleware's, as problem+json. The code is the
// status's ErrorInfo reason when it has one, else the gRPC code's name.
func problemHandler(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	st := status.Convert(err)
	code := st.Code().String()
	switch st.Code() {
	case codes.NotFound:
		code = "NOT_FOUND"
	case codes.Unauthenticated:
		code = "UNAUTHENTICATED"
	case codes.PermissionDenied:
		code = "PERMISSION_DENIED"
	case codes.InvalidArgument:
		code = "INVALID_ARGUMENT"
	case codes.Unavailable:
		code = "SERVICE_UNAVAILABLE"
	case codes.DeadlineExceeded:
		code = "UPSTREAM_TIMEOUT"
	default:
		code = "INTERNAL"
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && titles[info.GetReason()] != "" {
			code = info.GetReason()
		}
	}
	writeProblem(w, r, runtime.HTTPStatusFromCode(st.Code()), code, st.Message())
}

// writeProblem sends one problem+json answer.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, code, detail string) {
	p := problem{Type: "/problems/" + strings.ToLower(strings.ReplaceAll(code, "_", "-")), Title: titles[code],
		Status: status, Detail: detail, Instance: r.URL.Path, Code: code}
	if sc := trace.SpanContextFromContext(r.Context()); sc.HasTraceID() {
		p.TraceID = sc.TraceID().String()
	}
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="portico"`)
	}
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}

// errorWithReason is a gRPC status error carrying reason as its
// ErrorInfo, which problemHandler makes the problem's code.
func errorWithReason(c codes.Code, reason, msg string) error {
	st, err := status.New(c, msg).WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: "portico.dev"})
	if err != nil {
		return status.Error(c, msg)
	}
	return st.Err()
}
