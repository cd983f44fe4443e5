package gateway

import (
	"bytes"
	"compress/gzip"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/config"
	genopenapi "github.com/portico-gateway/portico/gen/openapi"
)

// TestOpenAPIGzip: /openapi.json goes gzip-compressed to a client whose
// Accept-Encoding allows it and as is to one whose does not, both with
// Vary: Accept-Encoding and one weak ETag (RFC 9110 section 8.8.1: the
// encodings differ in bytes, not meaning), which If-None-Match answers
// 304 in either encoding. The compressed bytes are the ones built with
// the document (the same slice at every request, not compressed per
// request), and a reload that changes the document changes them and the
// ETag.
func TestOpenAPIGzip(t *testing.T) {
	policy := func(roles ...string) func(*config.Config) {
		return func(c *config.Config) {
			c.Auth.Policy = []config.PolicyRuleConfig{{Roles: []string{"admin"}, Allow: []string{"*"}},
				{Roles: []string{"customer"}, Allow: []string{"/api/orders/**"}},
				{Roles: roles, Allow: []string{"GET /api/inventory/**"}}}
		}
	}
	for _, tc := range []struct {
		name string
		cfg  func(*config.Config)
	}{
		{"built-in document", nil},
		{"document under auth.policy", policy("reader")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, setup{cfg: tc.cfg})
			want := genopenapi.JSON
			if d := h.srv.snap.Load().openAPI; d != nil {
				want = d
			}
			etag := checkOpenAPIEncodings(t, h, want)
			if tc.cfg == nil {
				return
			}
			cfg := h.cfg
			policy("reader", "partner")(&cfg)
			if _, err := h.srv.Reload(t.Context(), cfg, SourceAdmin); err != nil {
				t.Fatal(err)
			}
			after := checkOpenAPIEncodings(t, h, h.srv.snap.Load().openAPI)
			if after == etag {
				t.Errorf("ETag %s unchanged after a reload changed the document", etag)
			}
		})
	}
}

// checkOpenAPIEncodings checks /openapi.json's two encodings against doc
// and returns their ETag.
func checkOpenAPIEncodings(t *testing.T, h *harness, doc []byte) string {
	t.Helper()
	zipped := h.do("GET", "/openapi.json", "", "", "Accept-Encoding: gzip, deflate, br")
	plain := h.do("GET", "/openapi.json", "", "", "Accept-Encoding: identity")
	refused := h.do("GET", "/openapi.json", "", "", "Accept-Encoding: gzip;q=0, *;q=0.5")
	for name, r := range map[string]response{"gzip": zipped, "identity": plain, "gzip;q=0": refused} {
		if r.status != 200 || r.header.Get("Vary") != "Accept-Encoding" || !strings.HasPrefix(r.header.Get("ETag"), `W/"`) ||
			r.header.Get("Content-Type") != "application/json" || r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
			t.Errorf("%s: %d, Vary %q, ETag %q, Content-Type %q, Content-Length %q for %d bytes", name, r.status,
				r.header.Get("Vary"), r.header.Get("ETag"), r.header.Get("Content-Type"), r.header.Get("Content-Length"), len(r.body))
		}
	}
	if zipped.header.Get("Content-Encoding") != "gzip" || plain.header.Get("Content-Encoding") != "" || refused.header.Get("Content-Encoding") != "" {
		t.Errorf("Content-Encoding: %q with gzip accepted, %q with identity, %q with gzip refused, want gzip, none, none",
			zipped.header.Get("Content-Encoding"), plain.header.Get("Content-Encoding"), refused.header.Get("Content-Encoding"))
	}
	if !bytes.Equal(plain.body, doc) || !bytes.Equal(refused.body, doc) {
		t.Error("the identity answer is not the document")
	}
	if got := gunzipBody(t, zipped.body); !bytes.Equal(got, doc) {
		t.Errorf("the gzip answer decompresses to %d bytes, not the document's %d", len(got), len(doc))
	}
	served := h.srv.openAPIServed
	if sn := h.srv.snap.Load(); sn.openAPIServed != nil {
		served = sn.openAPIServed
	}
	if !bytes.Equal(zipped.body, served.Gzip) {
		t.Error("the gzip answer is not the bytes compressed with the document")
	}
	t.Logf("/openapi.json: %d bytes, %d gzip-compressed", len(plain.body), len(zipped.body))
	if 4*len(zipped.body) > len(plain.body) {
		t.Errorf("gzip answer %d bytes for a %d-byte document, want under a quarter", len(zipped.body), len(plain.body))
	}
	etag := zipped.header.Get("ETag")
	if plain.header.Get("ETag") != etag {
		t.Errorf("ETag %s with gzip, %s without: one weak tag for both", etag, plain.header.Get("ETag"))
	}
	for _, enc := range []string{"gzip", "identity"} {
		r := h.do("GET", "/openapi.json", "", "", "Accept-Encoding: "+enc, "If-None-Match: "+etag)
		if r.status != 304 || len(r.body) != 0 || r.header.Get("ETag") != etag || r.header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("If-None-Match %s with %s = %d (%d bytes), ETag %q, Vary %q, want 304 with the tag and Vary", etag, enc, r.status,
				len(r.body), r.header.Get("ETag"), r.header.Get("Vary"))
		}
	}
	if r := h.do("GET", "/openapi.json", "", "", "Accept-Encoding: gzip", `If-None-Match: W/"0000"`); r.status != 200 {
		t.Errorf("If-None-Match of another tag = %d, want 200", r.status)
	}
	// CORS' Vary: Origin stays beside it (the dev config allows this origin).
	r := h.do("GET", "/openapi.json", "", "", "Accept-Encoding: gzip", "Origin: http://localhost:3000")
	if vary := r.header.Values("Vary"); !slices.Contains(vary, "Origin") || !slices.Contains(vary, "Accept-Encoding") {
		t.Errorf("cross-origin GET: Vary %q, want Origin and Accept-Encoding", vary)
	}
	return etag
}

func gunzipBody(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	return out
}
