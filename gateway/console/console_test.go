package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestServe(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		status       int
		ctype        string
		body         bool
	}{
		{"GET", "/", 200, "text/html; charset=utf-8", true},
		{"HEAD", "/", 200, "text/html; charset=utf-8", false},
		{"GET", "/console/console.js", 200, "text/javascript; charset=utf-8", true},
		{"GET", "/console/console.css", 200, "text/css; charset=utf-8", true},
		{"GET", "/console/nope.js", 404, "text/plain; charset=utf-8", true},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Serve(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.status || rec.Header().Get("Content-Type") != tc.ctype || (rec.Body.Len() > 0) != tc.body {
				t.Errorf("%d %q with %d bytes, want %d %q (body %v)", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len(), tc.status, tc.ctype, tc.body)
			}
			if tc.status == 200 && rec.Header().Get("Content-Security-Policy") != CSP {
				t.Errorf("no CSP on %s", tc.path)
			}
		})
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
