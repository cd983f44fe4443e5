package gateway

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/portico-gateway/portico/gateway/problem"
)

// refusal is a cap's 503 OVERLOADED, built once when the shedder is: the
// header values and the body around its two per-request members (the
// instance, the request's path, and the traceId). A refusal then costs
// two header slices it shares, the trace id's, and four writes into
// net/http's buffer: no JSON encoding, no problem value, no header key
// canonicalised. Its bytes are exactly what problem.Write would send.
type refusal struct {
	head, mid, tail []byte // the body before the instance, between it and the traceId, after that
	contentType     []string
	cacheControl    []string
	retryAfter      []string
}

// Markers that stand for the instance and the traceId while the body is
// encoded once; JSON escapes the control character, so no detail can
// contain them.
const (
	instanceMark = "\x01instance"
	traceMark    = "\x01trace"
)

// newRefusal builds the refusal of the cap named scope, its type under
// typeBase (problems.type_base; empty means problem.TypeBase).
func newRefusal(scope string, retryAfter int, typeBase string) *refusal {
	p := problem.New(problem.CodeOverloaded, overloadDetail(scope))
	p.Instance, p.TraceID, p.RetryAfter = instanceMark, traceMark, retryAfter
	p.Rebase(typeBase)
	body := p.JSON()
	i := bytes.Index(body, []byte(`\u0001instance`))
	j := bytes.Index(body, []byte(`\u0001trace`))
	return &refusal{
		head: body[:i], mid: body[i+len(`\u0001instance`) : j], tail: body[j+len(`\u0001trace`):],
		contentType: []string{problem.ContentType}, cacheControl: []string{"no-store"},
		retryAfter: []string{strconv.Itoa(retryAfter)},
	}
}

// overloadDetail is the refusal's detail for the cap named scope.
func overloadDetail(scope string) string {
	if scope == edgeScope {
		return "The gateway is at its limit of requests in flight; the request was not started."
	}
	return "The gateway is at its limit of requests in flight for the " + scope + " routes; the request was not started."
}

// write sends the refusal of the request at path with traceID (valid, so
// plain JSON: traceid.Valid). It reports false, having sent nothing, for a
// path that JSON would escape or problem.JSON would cut; then the caller
// sends the problem the slow way.
func (rf *refusal) write(w http.ResponseWriter, path, traceID string) bool {
	if len(path) > problem.MaxEchoBytes || !plainJSON(path) {
		return false
	}
	h := w.Header()
	h["Content-Type"], h["Cache-Control"], h["Retry-After"] = rf.contentType, rf.cacheControl, rf.retryAfter
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(rf.head)
	_, _ = io.WriteString(w, path)
	_, _ = w.Write(rf.mid)
	_, _ = io.WriteString(w, traceID)
	_, _ = w.Write(rf.tail)
	return true
}

// plainJSON reports whether s needs no escaping in a JSON string (an
// escaped URL path never does: it is ASCII without quotes, backslashes or
// controls).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
