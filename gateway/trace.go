package gateway

import (
	"net/http"

	"github.com/portico-gateway/portico/internal/traceid"
)

// traceHeader carries the trace id on every request and response.
const traceHeader = "X-Trace-Id"

// requestTraceID returns the request's trace id, chosen by traceid.Choose
// from a single X-Trace-Id and a single W3C traceparent: a valid
// traceparent wins (W3C Trace Context: the caller's trace continues), then
// a valid X-Trace-Id, else a new id. An invalid id is replaced, never
// echoed, so a header cannot inject log lines.
func requestTraceID(r *http.Request) string {
	if id, ok := traceid.Choose(single(r, traceHeader), single(r, traceid.TraceparentKey)); ok {
		return id
	}
	return traceid.New()
}

// single returns the header's value when it was sent exactly once.
func single(r *http.Request, key string) string {
	if vs := r.Header.Values(key); len(vs) == 1 {
		return vs[0]
	}
	return ""
}
