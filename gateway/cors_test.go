package gateway

import (
	"slices"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/config"
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
			if tt.wantOrigin != "" && tt.method == "GET" {
				// A browser app reads the limit headers the 429 page and
				// the onboarding guide tell it to (the consumer review).
				exposed := r.header.Get("Access-Control-Expose-Headers")
				for _, h := range []string{"X-Trace-Id", "Retry-After", "RateLimit", "RateLimit-Policy", "X-RateLimit-Limit", "X-RateLimit-Remaining"} {
					if !slices.Contains(strings.Split(exposed, ", "), h) {
						t.Errorf("Access-Control-Expose-Headers on %d = %q, want %s in it", r.status, exposed, h)
					}
				}
			}
		})
	}
}

// TestCORSOff: a config without cors answers no CORS headers, and an
// OPTIONS preflight goes through authentication as before.
func TestCORSOff(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) { c.CORS = config.CORSConfig{} }})
	r := h.do("OPTIONS", "/api/inventory", "", "", "Origin: http://localhost:3000", "Access-Control-Request-Method: GET")
	if r.status != 401 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight with CORS off = %d, %q", r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
}

// TestCORSMethodsFollowRoutes: without cors.allowed_methods a preflight
// advertises exactly the methods the routes serve (HEAD with GET), so never
// DELETE, which no route has, and refuses a preflight for it; a configured
// list is kept as written.
func TestCORSMethodsFollowRoutes(t *testing.T) {
	preflight := []string{"Origin: http://localhost:3000", "Access-Control-Request-Method: DELETE"}
	t.Run("derived", func(t *testing.T) {
		h := newHarness(t, setup{})
		var want []string
		for _, r := range h.srv.snap.Load().table.Routes() {
			want = append(want, r.Method)
		}
		r := h.do("OPTIONS", "/api/orders", "", "", preflight...)
		if r.status != 403 {
			t.Errorf("DELETE preflight = %d, want 403 (no route has DELETE)", r.status)
		}
		r = h.do("OPTIONS", "/api/orders", "", "", "Origin: http://localhost:3000", "Access-Control-Request-Method: PATCH")
		got := strings.Split(r.header.Get("Access-Control-Allow-Methods"), ", ")
		if r.status != 204 || !slices.Equal(got, []string{"GET", "HEAD", "POST", "PATCH"}) {
			t.Errorf("PATCH preflight = %d, Allow-Methods %q, want 204 and GET, HEAD, POST, PATCH", r.status, got)
		}
		for _, m := range want {
			if !slices.Contains(got, m) {
				t.Errorf("a route serves %s; Allow-Methods %q lacks it", m, got)
			}
		}
	})
	t.Run("configured", func(t *testing.T) {
		h := newHarness(t, setup{cfg: func(c *config.Config) { c.CORS.AllowedMethods = []string{"GET", "DELETE"} }})
		r := h.do("OPTIONS", "/api/orders", "", "", preflight...)
		if r.status != 204 || r.header.Get("Access-Control-Allow-Methods") != "GET, DELETE" {
			t.Errorf("DELETE preflight = %d, Allow-Methods %q, want 204 and GET, DELETE", r.status, r.header.Get("Access-Control-Allow-Methods"))
		}
	})
}
