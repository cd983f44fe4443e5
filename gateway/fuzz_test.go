package gateway

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/timeout"
)

// FuzzAPIRequest drives whole requests through the edge in front of
// healthy stubs: whatever the client sends, the answer is never a 5xx, and
// every error is a problem. The one honest 5xx is 504 UPSTREAM_TIMEOUT for
// a client whose own Grpc-Timeout is shorter than the route's timeout (1m
// is one millisecond): the deadline that ran out was the client's choice.
func FuzzAPIRequest(f *testing.F) {
	h := newHarness(f, setup{})
	okStubs(h)
	// {} is replaced by the fuzzed path variable.
	routes := []struct{ method, path string }{
		{"POST", "/api/orders"}, {"GET", "/api/inventory"}, {"PATCH", "/api/inventory/{}"},
		{"POST", "/api/orders/{}:cancel"}, {"GET", "/api/orders/{}"}, {"POST", "/api/payments"},
	}
	f.Add(uint8(0), "", "", []byte(orderBody), "application/json", "", "k", "")
	f.Add(uint8(0), "", "", gzipBytes(orderBody), "application/json", "", "k", "gzip")
	f.Add(uint8(1), "", "pageSize=2&pageToken=x", []byte(nil), "", "5S", "", "")
	f.Add(uint8(2), "a", "updateMask=unitPrice,unit_price.currency,", []byte(`{}`), "application/json", "", "", "")
	f.Add(uint8(2), "a", "updateMask=name", []byte(`{"name":"x","unitPrice":{"amountMinor":"1"}}`), "application/json", "1m", "", "br")
	f.Add(uint8(2), "a", "", []byte(`{"reserved":"1","sku":"b"}`), "application/json", "", "", "")
	f.Add(uint8(2), "a", "", []byte(` {} `), "application/json", "", "", "")
	f.Add(uint8(3), "ord-1", "", []byte(`{"id":"x"}`), "application/json; charset=latin1", "", "", "")
	f.Add(uint8(4), "%FF", "id=a&id=b", []byte(`{`), "text/plain", "99999999H", "\x01", "gzip, identity")
	f.Add(uint8(5), "", "", []byte(`{"amount":{"amountMinor":1e400}}`), "application/json", "", "k", "x-gzip")
	f.Fuzz(func(t *testing.T, route uint8, id, query string, body []byte, contentType, timeout, key, encoding string) {
		rt := routes[int(route)%len(routes)]
		target := strings.Replace(rt.path, "{}", id, 1)
		if query != "" {
			target += "?" + query
		}
		req, err := http.NewRequest(rt.method, "http://edge"+target, strings.NewReader(string(body)))
		if err != nil || !strings.HasPrefix(req.URL.Path, "/api/") {
			return
		}
		req.Header.Set("Authorization", "Bearer "+adminToken)
		for k, v := range map[string]string{"Content-Type": contentType, "Grpc-Timeout": timeout, "Idempotency-Key": key, "Content-Encoding": encoding} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		rec := httptest.NewRecorder()
		h.srv.Handler().ServeHTTP(rec, req)
		if rec.Code >= 500 && !(rec.Code == 504 && clientDeadline(h.srv, req) && strings.Contains(rec.Body.String(), `"code":"UPSTREAM_TIMEOUT"`)) {
			t.Fatalf("%s %s (%q) = %d %s", rt.method, target, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s %s = %d with Content-Type %q", rt.method, target, rec.Code, rec.Header().Get("Content-Type"))
		}
	})
}

func gzipBytes(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return b.Bytes()
}

// clientDeadline reports whether req carries a valid Grpc-Timeout shorter
// than its route's timeout, so the client's own deadline bounds the call.
func clientDeadline(s *Server, req *http.Request) bool {
	sn := s.snap.Load()
	rt, _ := sn.table.Match(req.Method, req.URL.Path)
	if rt == nil {
		return false
	}
	d, err := timeout.ParseTimeout(req.Header.Get("Grpc-Timeout"))
	return err == nil && d < sn.endpoints[rt].timeout
}
