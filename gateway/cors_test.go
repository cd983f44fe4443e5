package gateway

import (
	"testing"
)

// TestCORS: preflights are answered before authentication (no token),
// allowed origins get the CORS headers on every answer, problems
// included; others get none, and their preflight is 403.
func TestCORS(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	const dev = "http://localhost:3000"
	tests := []struct {
		name       string
		method     string
		token      string
		header     []string
		wantStatus int
		wantOrigin string
	}{
		{"preflight", "OPTIONS", "", []string{"Origin: " + dev, "Access-Control-Request-Method: POST",
			"Access-Control-Request-Headers: authorization, content-type, idempotency-key"}, 204, dev},
		{"preflight, other origin", "OPTIONS", "", []string{"Origin: https://evil.example", "Access-Control-Request-Method: GET"}, 403, ""},
		{"preflight, method not allowed", "OPTIONS", "", []string{"Origin: " + dev, "Access-Control-Request-Method: PUT"}, 403, dev},
		{"preflight, header not allowed", "OPTIONS", "", []string{"Origin: " + dev, "Access-Control-Request-Method: GET", "Access-Control-Request-Headers: x-evil"}, 403, dev},
		{"request", "GET", readerToken, []string{"Origin: " + dev}, 200, dev},
		{"request without a token", "GET", "", []string{"Origin: " + dev}, 401, dev},
		{"request, other origin", "GET", readerToken, []string{"Origin: https://evil.example"}, 200, ""},
		{"OPTIONS without a preflight header", "OPTIONS", "", []string{"Origin: " + dev}, 401, dev},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(tt.method, "/api/inventory", tt.token, "", tt.header...)
			origin := r.header.Get("Access-Control-Allow-Origin")
			if tt.wantStatus == 403 && tt.wantOrigin != "" {
				origin = tt.wantOrigin // a refused preflight of an allowed origin may say so or not
			}
			if r.status != tt.wantStatus || origin != tt.wantOrigin {
				t.Fatalf("%s = %d, Allow-Origin %q (%s); want %d, %q", tt.method, r.status, origin, r.body, tt.wantStatus, tt.wantOrigin)
			}
			if tt.wantStatus == 204 && (r.header.Get("Access-Control-Allow-Methods") == "" || r.header.Get("Access-Control-Max-Age") != "600") {
				t.Errorf("preflight headers = %v", r.header)
			}
			if tt.wantOrigin != "" && tt.method == "GET" && r.header.Get("Access-Control-Expose-Headers") == "" {
				t.Errorf("no Access-Control-Expose-Headers on %d", r.status)
			}
		})
	}
}

// TestCORSOff: a config without cors answers no CORS headers, and an
// OPTIONS preflight goes through authentication as before.
func TestCORSOff(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *Config) { c.CORS = CORSConfig{} }})
	r := h.do("OPTIONS", "/api/inventory", "", "", "Origin: http://localhost:3000", "Access-Control-Request-Method: GET")
	if r.status != 401 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight with CORS off = %d, %q", r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
}
