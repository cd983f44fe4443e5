package gateway

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/portico-gateway/portico/gateway/canned"
	"github.com/portico-gateway/portico/gateway/console"
	"github.com/portico-gateway/portico/gateway/edgemetrics"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/internal/traceid"
)

// A request net/http cannot read never reaches a handler: its connection
// loop answers in plain text on the connection and closes it. The fronts
// hand every cleartext connection over wrapped (wrapMalformed), so those
// answers become the edge's problems instead: a Malformed request (400),
// Request headers too large (431), HTTP version not supported (505) or,
// for an Expect other than 100-continue, Expectation not supported (417),
// with an X-Trace-Id and Connection: close, counted under route
// "unmatched" (the API's; the admin API's are logged only, as all its
// answers) and logged as an access line with method and path empty.
//
// net/http answers an unsupported Transfer-Encoding with 501; the edge
// answers 400, as RFC 9112 section 6.3 requires when chunked is not the
// final coding (Transfer-Encoding: gzip), the usual case. For a chain
// ending in chunked ("gzip, chunked") section 6.1 says a server SHOULD
// answer 501; net/http does not tell the two apart, and a 400 for a
// message the edge will not read is the simpler promise. A version other
// than 1.x keeps 505 (RFC 9110 section 15.6.6, RFC 9112 section 2.3): the
// request line is well-formed, only its version is refused.

// wrapMalformed returns c wrapped so net/http's canned answers on it
// become problems; a *tls.Conn is returned as is (package canned: net/http
// needs it unwrapped).
func (s *Server) wrapMalformed(c net.Conn, admin bool) net.Conn {
	if _, ok := c.(*tls.Conn); ok {
		return c
	}
	return &canned.Conn{Conn: c, Rewrite: func(a canned.Answer) []byte {
		return s.answerMalformed(a, admin, c.RemoteAddr().String())
	}}
}

// malformedProblem is the problem the edge answers for a.
func malformedProblem(a canned.Answer) *problem.Problem {
	switch a.Status {
	case http.StatusRequestHeaderFieldsTooLarge:
		return problem.New(problem.CodeHeadersTooLarge, "The request line and headers are larger than the gateway reads.")
	case http.StatusHTTPVersionNotSupported:
		return problem.New(problem.CodeHTTPVersionNotSupported, "The request's HTTP version is not served; send HTTP/1.1.")
	case http.StatusExpectationFailed:
		return problem.New(problem.CodeExpectationFailed, "The gateway meets no expectation but 100-continue (RFC 9110 section 10.1.1).")
	case http.StatusNotImplemented:
		return problem.New(problem.CodeMalformedRequest, "The Transfer-Encoding is not chunked alone, so the body's length cannot be read (RFC 9112 section 6.3).")
	}
	detail := "The request line or a header cannot be read (RFC 9112): a bad percent-escape in the target, a malformed header, more than one Host header or a Content-Length that is not a number."
	switch a.Text {
	case "missing required Host header":
		detail = "The request has no Host header (RFC 9112 section 3.2)."
	case "malformed Host header":
		detail = "The Host header is not a valid host and port."
	case "invalid header name":
		detail = "A header name is not a token (RFC 9110 section 5.1)."
	case "invalid header value":
		detail = "A header value holds a control character (RFC 9110 section 5.5)."
	}
	return problem.New(problem.CodeMalformedRequest, detail)
}

// answerMalformed returns the answer for a (its problem, a new trace id,
// Connection: close), and counts and logs it; remote is the client's
// address.
func (s *Server) answerMalformed(a canned.Answer, admin bool, remote string) []byte {
	p := malformedProblem(a)
	p.TraceID = traceid.New()
	p.Rebase(s.snap.Load().cfg.Problems.TypeBase)
	body := p.JSON()
	h := http.Header{
		"Cache-Control":  {"no-store"},
		"Connection":     {"close"},
		"Content-Length": {strconv.Itoa(len(body))},
		"Content-Type":   {problem.ContentType},
		"Date":           {time.Now().UTC().Format(http.TimeFormat)},
		traceHeader:      {p.TraceID},
	}
	if admin {
		console.Headers(h) // every answer of the admin listener carries them
	}
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(p.Status) + " " + http.StatusText(p.Status) + "\r\n")
	_ = h.Write(&b)
	b.WriteString("\r\n")
	if !a.Head {
		b.Write(body)
	}
	if !admin {
		s.metrics.Request(edgemetrics.Answer{Route: "unmatched", Status: p.Status, Code: p.Code})
	}
	s.logMalformed(a, p, remote)
	return b.Bytes()
}

// logMalformed writes the access line of a request net/http could not
// read: no method, path or duration are known; error is net/http's reason.
func (s *Server) logMalformed(a canned.Answer, p *problem.Problem, remote string) {
	r := &http.Request{URL: &url.URL{}, Header: http.Header{}, RemoteAddr: remote}
	r = r.WithContext(traceid.NewContext(context.Background(), p.TraceID))
	ex := &exchange{route: "unmatched", code: p.Code, traceID: p.TraceID,
		logErr: "net/http refused the request: " + strconv.Itoa(a.Status) + " " + a.Text}
	s.logAccess(r, ex, p.Status, 0)
}
