package apiref

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPage: the page links only files that exist, each with its content
// hash (so a day's cache never serves an old file after a release), and
// has no inline script.
func TestPage(t *testing.T) {
	p, err := Page()
	if err != nil {
		t.Fatal(err)
	}
	page, err := gunzip(p.Gzip)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != p.Size || p.CacheControl != PageCache || p.ContentType != "text/html; charset=utf-8" {
		t.Errorf("page: %d bytes (Size %d), %q, %q", len(page), p.Size, p.CacheControl, p.ContentType)
	}
	links := regexp.MustCompile(`(?:href|src)="docs/([^"?]+)\?v=([0-9a-f]+)"`).FindAllStringSubmatch(string(page), -1)
	if len(links) < 4 {
		t.Fatalf("page links %d files:\n%s", len(links), page)
	}
	for _, l := range links {
		f, ok := Lookup(l[1])
		if !ok {
			t.Errorf("page links docs/%s, which is not served", l[1])
			continue
		}
		if want := `W/"` + l[2] + `"`; f.ETag != want {
			t.Errorf("docs/%s linked with v=%s, its ETag is %s", l[1], l[2], f.ETag)
		}
	}
	if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|\son[a-z]+=`).Match(page) {
		t.Errorf("page has inline script or an event handler attribute:\n%s", page)
	}
	for _, name := range Vendored {
		if _, ok := Lookup(name); !ok {
			t.Errorf("vendored %s is not served", name)
		}
	}
}

// TestServe: gzip to a client that accepts it, identity otherwise, 304 on
// a matching If-None-Match, headers alone to HEAD.
func TestServe(t *testing.T) {
	f, ok := Lookup("init.js")
	if !ok {
		t.Fatal("no init.js")
	}
	tests := []struct {
		name, method string
		header       map[string]string
		status       int
		encoding     string
		length       int
		body         int
	}{
		{"gzip", "GET", map[string]string{"Accept-Encoding": "gzip"}, 200, "gzip", len(f.Gzip), len(f.Gzip)},
		{"identity", "GET", nil, 200, "", f.Size, f.Size},
		{"gzip refused", "GET", map[string]string{"Accept-Encoding": "gzip;q=0, *"}, 200, "", f.Size, f.Size},
		{"head", "HEAD", map[string]string{"Accept-Encoding": "gzip"}, 200, "gzip", len(f.Gzip), 0},
		{"not modified", "GET", map[string]string{"If-None-Match": `"x", ` + f.ETag}, 304, "", -1, 0},
		{"strong form matches weakly", "GET", map[string]string{"If-None-Match": strings.TrimPrefix(f.ETag, "W/")}, 304, "", -1, 0},
		{"other etag", "GET", map[string]string{"If-None-Match": `W/"0000"`}, 200, "", f.Size, f.Size},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/docs/init.js", nil)
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			f.Serve(w, r)
			if w.Code != tt.status || w.Header().Get("Content-Encoding") != tt.encoding {
				t.Errorf("status %d encoding %q, want %d %q", w.Code, w.Header().Get("Content-Encoding"), tt.status, tt.encoding)
			}
			if tt.length >= 0 && w.Header().Get("Content-Length") != strconv.Itoa(tt.length) {
				t.Errorf("Content-Length %q, want %d", w.Header().Get("Content-Length"), tt.length)
			}
			if tt.method == http.MethodGet && w.Body.Len() != tt.body {
				t.Errorf("body %d bytes, want %d", w.Body.Len(), tt.body)
			}
			if w.Header().Get("Content-Security-Policy") != CSP || w.Header().Get("ETag") != f.ETag {
				t.Errorf("headers %v", w.Header())
			}
		})
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{"gzip"}, true},
		{[]string{"br, GZIP;q=0.5"}, true},
		{[]string{"deflate", "x-gzip"}, true},
		{[]string{"gzip;q=0"}, false},
		{[]string{"gzip; q=0.0"}, false},
		{[]string{"*"}, true},
		{[]string{"*;q=0"}, false},
		{[]string{"gzip;q=0, *"}, false},
		{[]string{"identity"}, false},
		{[]string{"gzipx"}, false},
	}
	for _, tt := range tests {
		if got := acceptsGzip(tt.values); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tt.values, got, tt.want)
		}
	}
}

func TestETagMatches(t *testing.T) {
	const etag = `W/"abc"`
	tests := []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{`W/"abc"`}, true},
		{[]string{`"abc"`}, true},
		{[]string{`"x" , W/"abc"`}, true},
		{[]string{`"x"`, `"abc"`}, true},
		{[]string{"*"}, true},
		{[]string{`"abcd"`}, false},
		{[]string{`abc`}, false},
	}
	for _, tt := range tests {
		if got := etagMatches(tt.values, etag); got != tt.want {
			t.Errorf("etagMatches(%q) = %v, want %v", tt.values, got, tt.want)
		}
	}
}

// FuzzHeaders: Accept-Encoding and If-None-Match are a client's; parsing
// them never panics, and Serve always answers 200 or 304.
func FuzzHeaders(f *testing.F) {
	f.Add("gzip;q=0.5, *;q=0", `W/"abc", "x"`)
	f.Add(";;,q=,", ",,,W/")
	file, _ := Lookup("docs.css")
	f.Fuzz(func(t *testing.T, ae, inm string) {
		acceptsGzip([]string{ae})
		r := httptest.NewRequest("GET", "/docs/docs.css", nil)
		r.Header["Accept-Encoding"] = []string{ae}
		r.Header["If-None-Match"] = []string{inm}
		w := httptest.NewRecorder()
		file.Serve(w, r)
		if w.Code != 200 && w.Code != 304 {
			t.Fatalf("status %d", w.Code)
		}
	})
}
