package gateway

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/problem"
)

// allDown is a harness whose upstreams are all unreachable: whatever it
// serves, it served without them.
var allDown = setup{down: []string{"inventory", "payment", "order"}}

// TestProblemPages: every code's type URI has a page, served without a
// token and without an upstream, as cacheable HTML that says whether to
// retry; HEAD answers the same headers without the body.
func TestProblemPages(t *testing.T) {
	h := newHarness(t, allDown)
	for _, p := range problem.Pages() {
		t.Run(p.Code, func(t *testing.T) {
			r := h.do("GET", problem.TypeURI(p.Code), "", "")
			if r.status != 200 {
				t.Fatalf("GET %s = %d %s, want 200", problem.TypeURI(p.Code), r.status, r.body)
			}
			checkPageHeaders(t, r, len(r.body))
			body := string(r.body)
			for _, want := range []string{p.Code, strconv.Itoa(p.Status), "etry"} {
				if !strings.Contains(body, want) {
					t.Errorf("page of %s lacks %q:\n%s", p.Code, want, body)
				}
			}
			head := h.do("HEAD", problem.TypeURI(p.Code), "", "")
			if head.status != 200 || len(head.body) != 0 {
				t.Errorf("HEAD %s = %d with %d body bytes, want 200 and none", problem.TypeURI(p.Code), head.status, len(head.body))
			}
			checkPageHeaders(t, head, len(r.body))
		})
	}
}

func checkPageHeaders(t *testing.T, r response, length int) {
	t.Helper()
	want := map[string]string{
		"Content-Type":   "text/html; charset=utf-8",
		"Content-Length": strconv.Itoa(length),
		"Cache-Control":  problemPageCache,
	}
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if r.header.Get("X-Trace-Id") == "" {
		t.Error("no X-Trace-Id")
	}
}

// TestProblemIndex: /problems links every page.
func TestProblemIndex(t *testing.T) {
	h := newHarness(t, allDown)
	for _, method := range []string{"GET", "HEAD"} {
		r := h.do(method, "/problems", "", "")
		if r.status != 200 || r.header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("%s /problems = %d %q", method, r.status, r.header.Get("Content-Type"))
		}
		if method == "HEAD" {
			continue
		}
		for _, c := range problem.Codes() {
			if link := `href="problems/` + problem.Slug(c) + `"`; !strings.Contains(string(r.body), link) {
				t.Errorf("/problems lacks %s (relative, so it resolves under a path prefix)", link)
			}
		}
	}
}

// TestProblemPagesRefuse: an unknown slug is a 404 problem, another method
// a 405 problem with Allow.
func TestProblemPagesRefuse(t *testing.T) {
	checkRefusals(t, newHarness(t, allDown), []opsRefusal{
		{"unknown slug", "GET", "/problems/no-such-problem", 404, problem.CodeNotFound},
		{"upper case code", "GET", "/problems/UPSTREAM_TIMEOUT", 404, problem.CodeNotFound},
		{"empty slug", "GET", "/problems/", 404, problem.CodeNotFound},
		{"deeper path", "GET", "/problems/circuit-open/more", 404, problem.CodeNotFound},
		{"escaped markup", "GET", "/problems/%3Cscript%3E", 404, problem.CodeNotFound},
		{"head unknown", "HEAD", "/problems/nope", 404, ""},
		{"post page", "POST", "/problems/circuit-open", 405, problem.CodeMethodNotAllowed},
		{"delete index", "DELETE", "/problems", 405, problem.CodeMethodNotAllowed},
		{"options page", "OPTIONS", "/problems/not-found", 405, problem.CodeMethodNotAllowed},
		{"prefix is not the path", "GET", "/problemsx", 404, problem.CodeRouteNotFound},
	})
}

// opsRefusal is a request an ops path refuses with a problem.
type opsRefusal struct {
	name, method, path string
	wantStatus         int
	wantCode           string // "" for HEAD, which has no body
}

// checkRefusals sends each request and checks its problem: status, code,
// and Allow: GET, HEAD on a 405.
func checkRefusals(t *testing.T, h *harness, tests []opsRefusal) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(tt.method, tt.path, "", "")
			if r.status != tt.wantStatus || r.header.Get("Content-Type") != problem.ContentType {
				t.Fatalf("%s %s = %d %q, want %d problem", tt.method, tt.path, r.status, r.header.Get("Content-Type"), tt.wantStatus)
			}
			if tt.wantStatus == 405 && r.header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow = %q, want GET, HEAD", r.header.Get("Allow"))
			}
			if tt.wantCode != "" {
				if got := r.json(t)["code"]; got != tt.wantCode {
					t.Errorf("code = %v, want %s", got, tt.wantCode)
				}
			}
		})
	}
}

// TestProblemTypesResolve: a problem's type, resolved against the URL of
// the request that got it (RFC 9457 section 3.1.1), is a page the edge
// serves; for every code, and for problems the edge really answered.
func TestProblemTypesResolve(t *testing.T) {
	h := newHarness(t, allDown)
	base, err := url.Parse(h.http.URL + "/api/orders/ord-1?view=full")
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(t *testing.T, typ string) {
		t.Helper()
		ref, err := url.Parse(typ)
		if err != nil {
			t.Fatalf("type %q: %v", typ, err)
		}
		u := base.ResolveReference(ref)
		if u.Host != base.Host {
			t.Fatalf("type %q resolves to %s, off the edge", typ, u)
		}
		if r := h.do("GET", u.RequestURI(), "", ""); r.status != 200 {
			t.Errorf("type %q resolves to %s: %d, want 200", typ, u, r.status)
		}
	}
	for _, c := range problem.Codes() {
		t.Run(c, func(t *testing.T) { resolve(t, problem.TypeURI(c)) })
	}
	answered := []struct{ name, method, path, token string }{
		{"401 no token", "GET", "/api/orders/ord-1", ""},
		{"404 no route", "GET", "/api/nope", adminToken},
		{"405 method", "DELETE", "/api/orders", adminToken},
		{"502 upstream down", "GET", "/api/orders/ord-1", aliceToken},
		{"404 unknown page", "GET", "/problems/nope", ""},
	}
	for _, tt := range answered {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(tt.method, tt.path, tt.token, "")
			typ, _ := r.json(t)["type"].(string)
			resolve(t, typ)
		})
	}
}

// TestProblemPagesRoute: every page, known or not, is one route in the
// access log and the metrics, so no request can add a series.
func TestProblemPagesRoute(t *testing.T) {
	checkRoutes(t, newHarness(t, allDown), map[string]string{
		"/problems":                 "/problems",
		"/problems/circuit-open":    "/problems/{slug}",
		"/problems/made-up-abc-123": "/problems/{slug}",
	})
}

// checkRoutes GETs each path and checks the route its access line names.
func checkRoutes(t *testing.T, h *harness, paths map[string]string) {
	t.Helper()
	for path := range paths {
		h.do("GET", path, "", "")
	}
	// The access line is written when the handler returns, which may be
	// after the client has read the whole answer: wait for the lines (on
	// each write), not for the answers.
	h.logs.WaitFor(t.Context(), 10*time.Second, func(string) bool { return len(h.logs.lines(t, "request")) >= len(paths) })
	lines := h.logs.lines(t, "request")
	if len(lines) != len(paths) {
		t.Fatalf("%d access lines, want %d:\n%s", len(lines), len(paths), h.logs.String())
	}
	for _, l := range lines {
		if want := paths[l["path"].(string)]; l["route"] != want {
			t.Errorf("%v logged with route %v, want %s", l["path"], l["route"], want)
		}
	}
}
