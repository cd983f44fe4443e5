package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// TestSmugglingClosesConnection sends a request with both Content-Length
// and Transfer-Encoding: chunked, followed on the same connection by a
// second request that a front proxy trusting Content-Length would have
// taken as body (RFC 9112 section 6.1, 11.2). The edge must answer the
// first and close, so the second is never served.
func TestSmugglingClosesConnection(t *testing.T) {
	smuggled := "GET /api/orders/ord-1 HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + adminToken + "\r\n\r\n"
	tests := []struct {
		name  string
		first string
	}{
		{"content-length and chunked", "POST /api/orders HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\n" +
			"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
		{"chunked alone", "POST /api/orders HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\n" +
			"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
		{"chunked with a token", "POST /api/orders HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\nAuthorization: Bearer " + aliceToken + "\r\n" +
			"Idempotency-Key: k1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"},
		{"HTTP/1.0 keep-alive with chunked and content-length", "POST /api/orders HTTP/1.0\r\nHost: edge\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n" +
			"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"},
		{"malformed chunk", "POST /api/orders HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\nAuthorization: Bearer " + aliceToken + "\r\n" +
			"Idempotency-Key: k1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{})
			var served atomic.Int32
			h.order.getOrder = func(context.Context, *orderv1.GetOrderRequest) (*orderv1.Order, error) {
				served.Add(1)
				return &orderv1.Order{Id: "ord-1"}, nil
			}
			// sendRaw bounds the whole exchange, not a wait: a kept-open
			// connection fails the read below instead of hanging.
			br := sendRaw(t, h, tt.first+smuggled)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("first response: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if !resp.Close {
				t.Errorf("first response (%d) does not close the connection: Connection = %q", resp.StatusCode, resp.Header.Get("Connection"))
			}
			if second, err := http.ReadResponse(br, nil); err == nil {
				t.Errorf("the smuggled request was answered: %d", second.StatusCode)
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "reset") {
				t.Errorf("after the first response: %v, want the connection closed", err)
			}
			if n := served.Load(); n != 0 {
				t.Errorf("the smuggled GetOrder reached the order service %d times", n)
			}
		})
	}
}

// TestAuthorityFormNamesAPath sends CONNECT in authority-form, whose
// request target has no path: the problem must still name one, as every
// problem's instance and detail do.
func TestAuthorityFormNamesAPath(t *testing.T) {
	h := newHarness(t, setup{})
	br := sendRaw(t, h, "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n")
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		Status   int    `json:"status"`
		Code     string `json:"code"`
		Detail   string `json:"detail"`
		Instance string `json:"instance"`
		TraceID  string `json:"traceId"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatalf("status %d: body: %v", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusNotFound || p.Code != "ROUTE_NOT_FOUND" || p.Instance != "/" ||
		p.Detail != "No route matches /." || p.TraceID == "" {
		t.Errorf("CONNECT authority-form: %d %+v; want 404 ROUTE_NOT_FOUND, instance /, detail naming /, a traceId", resp.StatusCode, p)
	}
}

// TestH2CPrefaceIs505: the HTTP/2 cleartext preface on a raw TCP
// connection gets the 505 problem, as the README promises for any HTTP
// version other than 1.x (it got the router's 404), and the connection is
// closed.
func TestH2CPrefaceIs505(t *testing.T) {
	h := newHarness(t, setup{})
	br := sendRaw(t, h, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	checkProblem(t, response{status: resp.StatusCode, header: resp.Header, body: body}, http.StatusHTTPVersionNotSupported, "HTTP_VERSION_NOT_SUPPORTED")
	if n, err := br.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("after the 505: read %d bytes, %v; want the connection closed", n, err)
	}
}

// sendRaw writes raw to a new TCP connection to h's edge (closed when t
// ends, every read and write bounded by 10s) and returns its reader.
func sendRaw(t *testing.T, h *harness, raw string) *bufio.Reader {
	t.Helper()
	conn, err := net.Dial("tcp", h.http.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil { // a bound, not a wait
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	return bufio.NewReader(conn)
}
