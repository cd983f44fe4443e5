package canned

import (
	"bytes"
	"io"
	"net"
	"strconv"
)

// headers is what net/http writes between a canned answer's status line
// and its body (net/http server.go: errorHeaders).
const headers = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// teBody is the body of net/http's answer to an unsupported
// Transfer-Encoding; every other canned answer repeats its status line.
const teBody = "Unsupported transfer encoding"

// MaxLen bounds the length of a canned answer: net/http's longest
// ("400 Bad Request: missing required Host header" twice, and headers)
// is under 200 bytes.
const MaxLen = 256

// Answer is one canned answer net/http was about to write.
type Answer struct {
	// Status is its HTTP status: 400, 417, 431, 501 or 505.
	Status int
	// Text is net/http's reason after the status text, "" when it gave
	// none: "missing required Host header", "malformed Host header",
	// "invalid header name", "invalid header value", "unsupported
	// protocol version", "Unsupported transfer encoding", "unsupported
	// expectation" (417).
	Text string
	// Head is set when net/http's answer shows the request was a HEAD:
	// the replacement must have no body (RFC 9110 section 9.3.2).
	Head bool
}

// Parse reports whether b is exactly one canned answer, and which.
func Parse(b []byte) (Answer, bool) {
	if len(b) > MaxLen {
		return Answer{}, false
	}
	if ok, head := isExpectationFailed(b); ok {
		return Answer{Status: 417, Text: expectText, Head: head}, true
	}
	if !bytes.HasPrefix(b, []byte("HTTP/1.1 ")) {
		return Answer{}, false
	}
	rest := b[len("HTTP/1.1 "):]
	i := bytes.IndexByte(rest, '\r') // the status line's end: the headers must follow at once
	if i < 4 || rest[3] != ' ' || !bytes.HasPrefix(rest[i:], []byte(headers)) {
		return Answer{}, false
	}
	line, body := rest[:i], rest[i+len(headers):]
	status, err := strconv.Atoi(string(line[:3]))
	if err != nil || status < 400 || status > 599 {
		return Answer{}, false
	}
	want := line
	if status == 501 {
		want = []byte(teBody)
	}
	if !bytes.Equal(body, want) {
		return Answer{}, false
	}
	a := Answer{Status: status}
	if _, text, ok := bytes.Cut(line, []byte(": ")); ok {
		a.Text = string(text)
	}
	if status == 501 {
		a.Text = teBody
	}
	return a, true
}

// expectText is the Text of the 417 Answer.
const expectText = "unsupported expectation"

// isExpectationFailed reports whether b is net/http's answer to an Expect
// other than 100-continue (server.go, sendExpectationFailed): written
// through its response writer, with no handler, so only Connection and
// Date, and Content-Length: 0 but to a HEAD:
//
//	HTTP/1.x 417 Expectation Failed\r\nConnection: close\r\nDate: <IMF-fixdate>\r\n[Content-Length: 0\r\n]\r\n
//
// isHead is set for the form without Content-Length, net/http's to a HEAD.
func isExpectationFailed(b []byte) (ok, isHead bool) {
	const (
		head = " 417 Expectation Failed\r\nConnection: close\r\nDate: "
		date = len("Mon, 02 Jan 2006 15:04:05 GMT")
	)
	if !bytes.HasPrefix(b, []byte("HTTP/1.")) || len(b) < len("HTTP/1.x")+len(head)+date ||
		!bytes.HasPrefix(b[len("HTTP/1.x"):], []byte(head)) {
		return false, false
	}
	switch string(b[len("HTTP/1.x")+len(head)+date:]) {
	case "\r\nContent-Length: 0\r\n\r\n":
		return true, false
	case "\r\n\r\n":
		return true, true
	}
	return false, false
}

// Conn is a net.Conn whose canned answers are replaced by what Rewrite
// returns for them.
type Conn struct {
	net.Conn
	// Rewrite returns the bytes to write instead of a; it runs on the
	// goroutine that writes (net/http's for the connection).
	Rewrite func(a Answer) []byte
}

// Write writes b, or Rewrite's answer in its place when b is a canned
// answer. It reports len(b) written when the replacement was.
func (c *Conn) Write(b []byte) (int, error) {
	if len(b) <= MaxLen {
		if a, ok := Parse(b); ok {
			if _, err := c.Conn.Write(c.Rewrite(a)); err != nil {
				return 0, err
			}
			return len(b), nil
		}
	}
	return c.Conn.Write(b)
}

// CloseWrite half-closes the connection when the wrapped one can, as
// net/http does after its 431 (closeWriteAndWait) so the client reads the
// answer before the reset.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps the wrapped connection's io.ReaderFrom (sendfile on a
// TCP connection) for bodies net/http copies from a file; only bodies
// arrive this way, never a canned answer.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// writerOnly hides a writer's ReadFrom, so io.Copy does not call back.
type writerOnly struct{ io.Writer }
