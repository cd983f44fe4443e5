package apiref

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Serve answers r with f: 304 when If-None-Match names f's ETag, else 200
// with the gzip bytes to a client that accepts gzip and the uncompressed
// bytes (kept, or decompressed now) to one that does not. Both carry
// Vary: Accept-Encoding, so a cache keeps them apart. Every answer carries the
// CSP, nosniff, no-referrer, Vary and f's cache headers; HEAD gets the
// headers alone.
func (f *File) Serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", f.CacheControl)
	h.Set("ETag", f.ETag)
	h.Add("Vary", "Accept-Encoding") // Add: CORS' Vary: Origin, set before, stays
	if etagMatches(r.Header.Values("If-None-Match"), f.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", f.ContentType)
	gz := acceptsGzip(r.Header.Values("Accept-Encoding"))
	if gz {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(f.Gzip)))
	} else {
		h.Set("Content-Length", strconv.Itoa(f.Size))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if gz {
		_, _ = w.Write(f.Gzip)
		return
	}
	if f.raw != nil {
		_, _ = w.Write(f.raw)
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(f.Gzip))
	if err != nil { // embedded and checked by the tests: cannot happen
		return
	}
	_, _ = io.Copy(w, zr)
}

// etagMatches reports whether an If-None-Match list names etag, weakly
// compared (RFC 9110 section 13.1.2), or is "*".
func etagMatches(values []string, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for _, v := range values {
		for tag := range strings.SplitSeq(v, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == want {
				return true
			}
		}
	}
	return false
}

// acceptsGzip reports whether Accept-Encoding admits gzip: listed (or
// x-gzip) with a non-zero weight, or unlisted and "*" with a non-zero
// weight (RFC 9110 section 12.5.3).
func acceptsGzip(values []string) bool {
	gzip, star := -1, -1 // -1 unlisted, 0 refused, 1 accepted
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(item), ";")
			ok := 1
			if q, found := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); found {
				if w, err := strconv.ParseFloat(q, 64); err == nil && w == 0 {
					ok = 0
				}
			}
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "x-gzip":
				gzip = ok
			case "*":
				star = ok
			}
		}
	}
	if gzip >= 0 {
		return gzip == 1
	}
	return star == 1
}
