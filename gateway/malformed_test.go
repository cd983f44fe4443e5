package gateway

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portico-gateway/portico/gateway/console"
	"github.com/portico-gateway/portico/internal/logging"
)

// serveLogged runs h's edge with Serve on a free port, logging to logs and
// counting in reg, and returns its address; the test's cleanup stops it.
func serveLogged(t testing.TB, h *harness, logs *syncBuffer, reg *prometheus.Registry) string {
	t.Helper()
	cfg := h.cfg
	cfg.ShutdownGrace = 5 * time.Second
	srv, err := New(context.Background(), cfg, WithDialer(h.dial),
		WithLogger(logging.New(logs, "gateway", slog.LevelDebug)), WithRegistry(reg))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve() = %v", err)
		}
	})
	// The first answer means Serve set its listeners up (admin_listen too).
	c, err := net.DialTimeout("tcp", lis.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(c, "GET /healthz/live HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
		t.Fatal(err)
	}
	return lis.Addr().String()
}

// unmatched is the edge's requests_total count for route "unmatched",
// status and problem code.
func unmatched(t *testing.T, reg *prometheus.Registry, status int, code string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "portico_gateway_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["route"] == "unmatched" && l["code"] == strconv.Itoa(status) && l["problem"] == code {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// rawAnswer writes request on a new connection and reads everything until
// the edge closes it: one answer, and whether it said Connection: close.
func rawAnswer(t *testing.T, addr, request string) (response, bool) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(c, request) // a 431 may come (and the reset) before all of it is sent
	raw, err := io.ReadAll(c)
	if err != nil && len(raw) == 0 {
		t.Fatalf("reading the answer to %.40q: %v", request, err)
	}
	var req *http.Request
	if strings.HasPrefix(request, "HEAD ") {
		req = &http.Request{Method: http.MethodHead}
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(raw))), req)
	if err != nil {
		t.Fatalf("answer to %.40q: %v: %q", request, err, raw)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}, resp.Close
}

// TestMalformedRequests: every request net/http refuses before a handler
// runs is answered with the edge's problem (not net/http's text/plain),
// an X-Trace-Id and Connection: close, counted under route "unmatched"
// and logged as an access line.
func TestMalformedRequests(t *testing.T) {
	h := newHarness(t, setup{})
	logs, reg := &syncBuffer{}, prometheus.NewRegistry()
	addr := serveLogged(t, h, logs, reg)
	const end = "Connection: close\r\n\r\n"
	for _, tc := range []struct {
		name, request string
		status        int
		code          string
	}{
		{"bad escape in the target", "GET /api/payments/%zz HTTP/1.1\r\nHost: edge\r\n" + end, 400, "MALFORMED_REQUEST"},
		{"transfer coding gzip", "POST /api/orders HTTP/1.1\r\nHost: edge\r\nTransfer-Encoding: gzip\r\n" + end, 400, "MALFORMED_REQUEST"},
		{"transfer coding gzip, chunked", "POST /api/orders HTTP/1.1\r\nHost: edge\r\nTransfer-Encoding: gzip, chunked\r\n" + end, 400, "MALFORMED_REQUEST"},
		{"cleartext HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED"},
		{"HTTP/9.9", "GET /healthz/live HTTP/9.9\r\nHost: edge\r\n" + end, 505, "HTTP_VERSION_NOT_SUPPORTED"},
		{"header name with a space", "GET /healthz/live HTTP/1.1\r\nHost: edge\r\nBad Name: x\r\n" + end, 400, "MALFORMED_REQUEST"},
		{"control character in a value", "GET /healthz/live HTTP/1.1\r\nHost: edge\r\nX-A: a\x01b\r\n" + end, 400, "MALFORMED_REQUEST"},
		{"no Host", "GET /healthz/live HTTP/1.1\r\n" + end, 400, "MALFORMED_REQUEST"},
		{"two Host headers", "GET /healthz/live HTTP/1.1\r\nHost: a\r\nHost: b\r\n" + end, 400, "MALFORMED_REQUEST"},
		{"malformed Host", "GET /healthz/live HTTP/1.1\r\nHost: a b\r\n" + end, 400, "MALFORMED_REQUEST"},
		{"Expect other than 100-continue", "GET /healthz/live HTTP/1.1\r\nHost: edge\r\nExpect: foo\r\n" + end, 417, "EXPECTATION_FAILED"},
		{"Expect on HTTP/1.0", "GET /healthz/live HTTP/1.0\r\nExpect: foo\r\n" + end, 417, "EXPECTATION_FAILED"},
		{"Content-Length abc", "POST /api/orders HTTP/1.1\r\nHost: edge\r\nContent-Length: abc\r\n" + end, 400, "MALFORMED_REQUEST"},
		{"headers beyond net/http's read limit", "GET /healthz/live HTTP/1.1\r\nHost: edge\r\nX-Pad: " +
			strings.Repeat("p", headerReadLimit(h.cfg.HTTP.MaxHeaderBytes)+4096+1024) + "\r\n" + end, 431, "REQUEST_HEADER_FIELDS_TOO_LARGE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := unmatched(t, reg, tc.status, tc.code)
			r, closes := rawAnswer(t, addr, tc.request)
			checkProblem(t, r, tc.status, tc.code)
			if !closes {
				t.Error("no Connection: close, or the connection stayed open")
			}
			if got := unmatched(t, reg, tc.status, tc.code); got != before+1 {
				t.Errorf("requests_total{route=unmatched,code=%d,problem=%s} = %v, want %v", tc.status, tc.code, got, before+1)
			}
			found := false
			for _, l := range logs.lines(t, "request") {
				if l["traceId"] == r.header.Get("X-Trace-Id") {
					found = l["status"] == float64(tc.status) && l["code"] == tc.code && l["route"] == "unmatched" && l["client"] == "127.0.0.1"
				}
			}
			if !found {
				t.Errorf("no access line with status %d, code %s and the answer's trace id", tc.status, tc.code)
			}
		})
	}
}

// TestMalformedHead: the 417 to a HEAD has the problem's headers and no
// body (RFC 9110 section 9.3.2).
func TestMalformedHead(t *testing.T) {
	h := newHarness(t, setup{})
	addr := serveLogged(t, h, &syncBuffer{}, prometheus.NewRegistry())
	r, closes := rawAnswer(t, addr, "HEAD /healthz/live HTTP/1.1\r\nHost: edge\r\nExpect: foo\r\n\r\n")
	if r.status != 417 || r.header.Get("Content-Type") != "application/problem+json" || r.header.Get("X-Trace-Id") == "" || len(r.body) != 0 || !closes {
		t.Errorf("HEAD with Expect: foo = %d %v %q (closes %v); want 417, a problem's headers, no body, Connection: close", r.status, r.header, r.body, closes)
	}
}

// TestMalformedKeepAlive: a malformed request after a served one on the
// same connection is the problem too, and the first answer is untouched.
func TestMalformedKeepAlive(t *testing.T) {
	h := newHarness(t, setup{})
	addr := serveLogged(t, h, &syncBuffer{}, prometheus.NewRegistry())
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(c, "GET /healthz/live HTTP/1.1\r\nHost: edge\r\n\r\nGET /%zz HTTP/1.1\r\nHost: edge\r\n\r\n")
	br := bufio.NewReader(c)
	for i, want := range []int{200, 400} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("answer %d = %d %s, want %d", i, resp.StatusCode, b, want)
		}
		if want == 400 {
			checkProblem(t, response{status: resp.StatusCode, header: resp.Header, body: b}, 400, "MALFORMED_REQUEST")
		}
	}
}

// FuzzRawRequest feeds arbitrary bytes to the edge's real listener: every
// answer must be a parseable HTTP/1.1 response, and every one of 400 and
// above application/problem+json with an X-Trace-Id. net/http's empty 417
// to an unknown Expect is the one known exception (docs/errors.md).
func FuzzRawRequest(f *testing.F) {
	for _, s := range []string{
		"GET /healthz/live HTTP/1.1\r\nHost: edge\r\n\r\n",
		"GET /api/payments/%zz HTTP/1.1\r\nHost: edge\r\n\r\n",
		"POST /api/orders HTTP/1.1\r\nHost: edge\r\nTransfer-Encoding: gzip\r\n\r\n",
		"GET / HTTP/9.9\r\nHost: edge\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	h := newHarness(f, setup{})
	addr := serveLogged(f, h, &syncBuffer{}, prometheus.NewRegistry())
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write(in)
		_ = c.(*net.TCPConn).CloseWrite() // the request ends here
		raw, _ := io.ReadAll(c)
		br := bufio.NewReader(strings.NewReader(string(raw)))
		for br.Buffered() > 0 || len(raw) > 0 {
			raw = nil
			if _, err := br.Peek(1); err != nil {
				return
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("unparseable answer to %q: %v", in, err)
			}
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode >= 400 && (resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("X-Trace-Id") == "") {
				t.Fatalf("answer to %q: %d %s %q", in, resp.StatusCode, resp.Header, b)
			}
		}
	})
}

// TestMalformedAdmin: the admin listener shares the fronts' code, so what
// net/http refuses there is the problem too, logged but not counted in
// the API's requests_total (no admin answer is).
func TestMalformedAdmin(t *testing.T) {
	h := newHarness(t, setup{})
	h.cfg.AdminListen = closedAddr(t)
	logs, reg := &syncBuffer{}, prometheus.NewRegistry()
	serveLogged(t, h, logs, reg)
	r, closes := rawAnswer(t, h.cfg.AdminListen, "GET /admin/%zz HTTP/1.1\r\nHost: edge\r\n\r\n")
	checkProblem(t, r, 400, "MALFORMED_REQUEST")
	if !closes {
		t.Error("no Connection: close")
	}
	if got := r.header.Get("Content-Security-Policy"); got != console.CSP || r.header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("CSP %q, X-Frame-Options %q: the admin listener's security headers are missing", got, r.header.Get("X-Frame-Options"))
	}
	if n := unmatched(t, reg, 400, "MALFORMED_REQUEST"); n != 0 {
		t.Errorf("requests_total{route=unmatched} = %v for an admin answer, want 0", n)
	}
	found := false
	for _, l := range logs.lines(t, "request") {
		found = found || l["traceId"] == r.header.Get("X-Trace-Id")
	}
	if !found {
		t.Error("no access line with the answer's trace id")
	}
}
