package gateway

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveEdge runs the harness's edge with Serve (the real http.Server and
// its limits) on a free port, with maxHeaderBytes as http.max_header_bytes,
// and returns its address; the test's cleanup shuts it down.
func serveEdge(t *testing.T, h *harness, maxHeaderBytes int) string {
	t.Helper()
	cfg := h.cfg
	cfg.HTTP.MaxHeaderBytes = maxHeaderBytes
	_, addr := serveReloadable(t, h, cfg, "http", http.DefaultClient)
	return addr
}

// rawRequest writes one HTTP/1.1 request as bytes, so the test controls
// what net/http's parser sees, and reads the answer.
func rawRequest(t *testing.T, addr, request string) response {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to %.40q: %v", request, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestServeHeaderLimit: headers over http.max_header_bytes that net/http
// still reads (up to headerSlack more) are a 431 problem with X-Trace-Id;
// beyond that net/http answers itself, and the edge rewrites that answer
// into the same problem (malformed.go). A 120 KB
// bearer token against the default limit is the problem too (the issue's
// bad-credential table, on the edge's own listener).
func TestServeHeaderLimit(t *testing.T) {
	h := newHarness(t, setup{})
	const limit = 2048
	addr := serveEdge(t, h, limit)
	req := func(pad int) string {
		return "GET /healthz/live HTTP/1.1\r\nHost: edge\r\nX-Pad: " + strings.Repeat("p", pad) + "\r\nConnection: close\r\n\r\n"
	}
	if r := rawRequest(t, addr, req(limit-200)); r.status != 200 || r.header.Get("X-Trace-Id") == "" {
		t.Errorf("headers under the limit = %d, X-Trace-Id %q; want 200 with one", r.status, r.header.Get("X-Trace-Id"))
	}
	checkProblem(t, rawRequest(t, addr, req(limit+100)), 431, "REQUEST_HEADER_FIELDS_TOO_LARGE")
	checkProblem(t, rawRequest(t, addr, req(limit+3000)), 431, "REQUEST_HEADER_FIELDS_TOO_LARGE")
	checkProblem(t, rawRequest(t, addr, req(limit+headerSlack-1024)), 431, "REQUEST_HEADER_FIELDS_TOO_LARGE")
	token := "GET /api/inventory HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + strings.Repeat("a", 120<<10) + "\r\nConnection: close\r\n\r\n"
	checkProblem(t, rawRequest(t, serveEdge(t, h, 0), token), 431, "REQUEST_HEADER_FIELDS_TOO_LARGE")
	// Beyond that net/http answers itself; the edge rewrites it (malformed.go).
	checkProblem(t, rawRequest(t, addr, req(limit+headerSlack+4096+1024)), 431, "REQUEST_HEADER_FIELDS_TOO_LARGE")
}

// TestServeOptionsAsterisk: net/http answers "OPTIONS *" itself unless told
// not to; the edge answers it, with X-Trace-Id like every answer.
func TestServeOptionsAsterisk(t *testing.T) {
	h := newHarness(t, setup{})
	addr := serveEdge(t, h, 0)
	r := rawRequest(t, addr, "OPTIONS * HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n\r\n")
	checkProblem(t, r, 404, "ROUTE_NOT_FOUND")
}
