package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestServe: each file with its type and the CSP; a file that needs a
// session (and the sign-in page, which "/" is without one) no-store and
// Vary: Cookie, a public one no-cache.
func TestServe(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		signIn       bool
		status       int
		ctype        string
		body         bool
		cache        string
	}{
		{"GET", "/", false, 200, "text/html; charset=utf-8", true, "no-store"},
		{"HEAD", "/", false, 200, "text/html; charset=utf-8", false, "no-store"},
		{"GET", "/", true, 200, "text/html; charset=utf-8", true, "no-store"},
		{"GET", "/console/console.js", false, 200, "text/javascript; charset=utf-8", true, "no-store"},
		{"GET", "/console/signin.js", false, 200, "text/javascript; charset=utf-8", true, "no-cache"},
		{"GET", "/console/console.css", false, 200, "text/css; charset=utf-8", true, "no-cache"},
		{"GET", "/console/nope.js", false, 404, "text/plain; charset=utf-8", true, ""},
	} {
		t.Run(tc.method+" "+tc.path+map[bool]string{true: " sign-in"}[tc.signIn], func(t *testing.T) {
			rec := httptest.NewRecorder()
			if tc.signIn {
				ServeSignIn(rec, httptest.NewRequest(tc.method, tc.path, nil))
			} else {
				Serve(rec, httptest.NewRequest(tc.method, tc.path, nil))
			}
			if rec.Code != tc.status || rec.Header().Get("Content-Type") != tc.ctype || (rec.Body.Len() > 0) != tc.body {
				t.Errorf("%d %q with %d bytes, want %d %q (body %v)", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len(), tc.status, tc.ctype, tc.body)
			}
			if tc.status != 200 {
				return
			}
			if rec.Header().Get("Content-Security-Policy") != CSP {
				t.Errorf("no CSP on %s", tc.path)
			}
			if cc, vary := rec.Header().Get("Cache-Control"), rec.Header().Get("Vary"); cc != tc.cache || (vary == "Cookie") != (tc.cache == "no-store") {
				t.Errorf("Cache-Control %q, Vary %q; want %q (Vary: Cookie with no-store)", cc, vary, tc.cache)
			}
			if got := strings.Contains(rec.Body.String(), "/console/signin.js"); tc.body && tc.path == "/" && got != tc.signIn {
				t.Errorf("the page loads signin.js %v, want %v", got, tc.signIn)
			}
		})
	}
}

// TestSignInPageHasNoConsole: the sign-in page loads neither the
// console's modules nor any data endpoint; the public files are the
// sign-in page's.
func TestSignInPageHasNoConsole(t *testing.T) {
	rec := httptest.NewRecorder()
	ServeSignIn(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	page := rec.Body.String()
	for _, p := range Paths() {
		if strings.Contains(page, `"`+p+`"`) && !Public(p) {
			t.Errorf("the sign-in page refers to %s, which needs a session", p)
		}
	}
	b, _ := static.ReadFile("static/signin.js")
	if s := string(b); strings.Contains(s, "import ") || strings.Contains(s, "/admin/") && !strings.Contains(s, "'/admin/session'") {
		t.Errorf("signin.js imports or fetches more than /admin/session")
	}
}

// TestPathsAreEmbedded: every path has its file, and the page's modules
// are all among them.
func TestPathsAreEmbedded(t *testing.T) {
	for _, p := range Paths() {
		rec := httptest.NewRecorder()
		Serve(rec, httptest.NewRequest(http.MethodGet, p, nil))
		if rec.Code != 200 {
			t.Errorf("%s: %d", p, rec.Code)
		}
		for _, imp := range []string{"./render.js", "./spark.js"} {
			if strings.Contains(rec.Body.String(), "from '"+imp+"'") && files["/console/"+strings.TrimPrefix(imp, "./")] == "" {
				t.Errorf("%s imports %s, which is not served", p, imp)
			}
		}
	}
}
