package gateway

import (
	"net/http"

	"github.com/portico-gateway/portico/internal/traceid"
)

// traceHeader carries the trace id on every request and response.
const traceHeader = "X-Trace-Id"

// requestTraceID returns the request's trace id: a single valid X-Trace-Id,
// else the trace-id of a single valid W3C traceparent, else a new one. An
// invalid id is replaced, never echoed, so a header cannot inject log lines.
func requestTraceID(r *http.Request) string {
	if vs := r.Header.Values(traceHeader); len(vs) == 1 && traceid.Valid(vs[0]) {
		return vs[0]
	}
	if vs := r.Header.Values(traceid.TraceparentKey); len(vs) == 1 {
		if id, ok := traceid.ParseTraceparent(vs[0]); ok {
			return id
		}
	}
	return traceid.New()
}
