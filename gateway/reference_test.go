package gateway

import (
	"bytes"
	"compress/gzip"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/apiref"
	"github.com/portico-gateway/portico/gateway/problem"
)

// docsLink matches the page's links to its own files.
var docsLink = regexp.MustCompile(`(?:href|src)="(docs/[^"?]+)(\?v=[0-9a-f]+)?"`)

// TestDocs: /docs answers without a token and without an upstream, under
// a CSP that allows only the edge's own files and no inline script; every
// file it links is served, gzip-compressed to a client that accepts it,
// the same bytes uncompressed to one that does not, 304 to a revalidation,
// headers alone to HEAD.
func TestDocs(t *testing.T) {
	h := newHarness(t, allDown)
	r := h.do("GET", "/docs", "", "")
	if r.status != 200 || r.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /docs = %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	checkDocsHeaders(t, r, apiref.PageCache)
	page := string(r.body)
	if n, m := strings.Count(page, "<script"), strings.Count(page, "<script src="); n != m || n == 0 {
		t.Errorf("%d script elements, %d with src: want every script a file of its own", n, m)
	}
	for _, link := range []string{`href="openapi.json"`, `href="problems"`} {
		if !strings.Contains(page, link) {
			t.Errorf("/docs lacks %s (relative, so it resolves under a path prefix)", link)
		}
	}
	links := docsLink.FindAllStringSubmatch(page, -1)
	if len(links) < 4 {
		t.Fatalf("/docs links %d files, want the bundle, its stylesheet, init.js and docs.css:\n%s", len(links), page)
	}
	for _, l := range links {
		t.Run(l[1], func(t *testing.T) { checkDocsFile(t, h, "/"+l[1]+l[2]) })
	}
	if again := h.do("GET", "/docs", "", "", "If-None-Match: "+r.header.Get("ETag")); again.status != 304 {
		t.Errorf("GET /docs with its ETag = %d, want 304", again.status)
	}
}

func checkDocsFile(t *testing.T, h *harness, path string) {
	t.Helper()
	plain := h.do("GET", path, "", "", "Accept-Encoding: identity")
	if plain.status != 200 || plain.header.Get("Content-Encoding") != "" {
		t.Fatalf("GET %s (identity) = %d, Content-Encoding %q", path, plain.status, plain.header.Get("Content-Encoding"))
	}
	checkDocsHeaders(t, plain, apiref.AssetCache)
	gz := h.do("GET", path, "", "", "Accept-Encoding: gzip, br")
	if gz.header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("GET %s (gzip) Content-Encoding = %q, want gzip", path, gz.header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.body))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(zr); err != nil || !bytes.Equal(b, plain.body) {
		t.Errorf("GET %s: gzip answer uncompresses to %d bytes (%v), identity answer has %d", path, len(b), err, len(plain.body))
	}
	if r := h.do("GET", path, "", "", "If-None-Match: "+plain.header.Get("ETag")); r.status != 304 || len(r.body) != 0 {
		t.Errorf("GET %s with its ETag = %d with %d bytes, want 304 and none", path, r.status, len(r.body))
	}
	if r := h.do("HEAD", path, "", ""); r.status != 200 || len(r.body) != 0 {
		t.Errorf("HEAD %s = %d with %d bytes, want 200 and none", path, r.status, len(r.body))
	}
}

func checkDocsHeaders(t *testing.T, r response, cache string) {
	t.Helper()
	want := map[string]string{
		"Content-Security-Policy": apiref.CSP,
		"X-Content-Type-Options":  "nosniff",
		"Cache-Control":           cache,
		"Vary":                    "Accept-Encoding",
	}
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*"} {
		if strings.Contains(r.header.Get("Content-Security-Policy"), bad) {
			t.Errorf("CSP allows %s: %s", bad, r.header.Get("Content-Security-Policy"))
		}
	}
	if r.header.Get("ETag") == "" || r.header.Get("X-Trace-Id") == "" {
		t.Errorf("ETag %q, X-Trace-Id %q: want both", r.header.Get("ETag"), r.header.Get("X-Trace-Id"))
	}
}

// TestDocsAssetsGzip: the page's largest files, Swagger UI's bundle and
// stylesheet, go to a client that accepts gzip as the bytes compressed
// once (embedded .gz, apiref.File.Gzip), not compressed per request, with
// Content-Length; both encodings carry Vary: Accept-Encoding and one weak
// ETag, which revalidates either.
func TestDocsAssetsGzip(t *testing.T) {
	h := newHarness(t, allDown)
	for _, name := range []string{"swagger-ui-bundle.js", "swagger-ui.css", "init.js", "docs.css"} {
		t.Run(name, func(t *testing.T) {
			f, ok := apiref.Lookup(name)
			if !ok {
				t.Fatalf("apiref has no %s", name)
			}
			gz := h.do("GET", "/docs/"+name, "", "", "Accept-Encoding: gzip, deflate, br, zstd")
			plain := h.do("GET", "/docs/"+name, "", "", "Accept-Encoding: identity")
			if gz.status != 200 || gz.header.Get("Content-Encoding") != "gzip" || !bytes.Equal(gz.body, f.Gzip) ||
				gz.header.Get("Content-Length") != strconv.Itoa(len(f.Gzip)) {
				t.Errorf("gzip: %d, Content-Encoding %q, Content-Length %q, %d bytes, want 200 with the %d precompressed bytes",
					gz.status, gz.header.Get("Content-Encoding"), gz.header.Get("Content-Length"), len(gz.body), len(f.Gzip))
			}
			if plain.status != 200 || plain.header.Get("Content-Encoding") != "" || len(plain.body) != f.Size {
				t.Errorf("identity: %d, Content-Encoding %q, %d bytes, want 200 with %d", plain.status, plain.header.Get("Content-Encoding"), len(plain.body), f.Size)
			}
			etag := gz.header.Get("ETag")
			for _, r := range []response{gz, plain} {
				if r.header.Get("Vary") != "Accept-Encoding" || r.header.Get("ETag") != etag || !strings.HasPrefix(etag, `W/"`) {
					t.Errorf("Vary %q, ETag %q (gzip answer's %q), want Vary: Accept-Encoding and one weak tag", r.header.Get("Vary"), r.header.Get("ETag"), etag)
				}
			}
			for _, enc := range []string{"gzip", "identity"} {
				if r := h.do("GET", "/docs/"+name, "", "", "Accept-Encoding: "+enc, "If-None-Match: "+etag); r.status != 304 || r.header.Get("Vary") != "Accept-Encoding" {
					t.Errorf("If-None-Match with %s = %d, Vary %q, want 304 with Vary", enc, r.status, r.header.Get("Vary"))
				}
			}
			t.Logf("/docs/%s: %d bytes, %d gzip-compressed", name, f.Size, len(f.Gzip))
		})
	}
}

// TestDocsRefuse: an unknown file is a 404 problem, /docs/ a relative
// redirect to the page, another method a 405 problem with Allow.
func TestDocsRefuse(t *testing.T) {
	h := newHarness(t, allDown)
	checkRefusals(t, h, []opsRefusal{
		{"unknown file", "GET", "/docs/nope.js", 404, problem.CodeNotFound},
		{"index by name", "GET", "/docs/index.html", 404, problem.CodeNotFound},
		{"escaped dots", "GET", "/docs/%2e%2e/openapi.json", 404, problem.CodeNotFound},
		{"deeper path", "GET", "/docs/vendor/LICENSE", 404, problem.CodeNotFound},
		{"source map", "GET", "/docs/swagger-ui.css.map", 404, problem.CodeNotFound},
		{"head unknown", "HEAD", "/docs/nope", 404, ""},
		{"post page", "POST", "/docs", 405, problem.CodeMethodNotAllowed},
		{"put file", "PUT", "/docs/init.js", 405, problem.CodeMethodNotAllowed},
		{"prefix is not the path", "GET", "/docsx", 404, problem.CodeRouteNotFound},
	})
	redirect := h.do("GET", "/docs/", "", "")
	// The client follows the redirect: /docs/ ends at the page.
	if redirect.status != 200 || !strings.Contains(string(redirect.body), "swagger-ui") {
		t.Errorf("GET /docs/ = %d, want the page after a redirect", redirect.status)
	}
}

// TestDocsRoute: the page and every file, known or not, are two routes in
// the access log and the metrics, so no request can add a series.
func TestDocsRoute(t *testing.T) {
	checkRoutes(t, newHarness(t, allDown), map[string]string{
		"/docs":               "/docs",
		"/docs/init.js":       "/docs/{file}",
		"/docs/made-up-12345": "/docs/{file}",
	})
}
