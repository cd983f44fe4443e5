package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/portico-gateway/portico/gateway/etag"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestConditionalEdge pins the edge's half of conditional requests against
// stub upstreams: the ETag it derives (strong from an etag field, weak
// otherwise), 304 for GET and HEAD, 412 for a GET's If-Match, weak or
// unsendable tags on a change forwarded as a tag no resource has (the
// service decides 403/404 first), a service's 412 carrying the current
// ETag, the If-Match tag
// forwarded as "if-match" metadata, and 400 for malformed or misplaced
// headers (without calling the upstream).
func TestConditionalEdge(t *testing.T) {
	h := newHarness(t, setup{})
	item := func(tag string) *inventoryv1.Item {
		return &inventoryv1.Item{Sku: "keyboard-001", Name: "K", Available: 1, Etag: tag}
	}
	h.inv.getItem = func(_ context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		if r.GetSku() == "untagged" {
			return item(""), nil
		}
		return item("v1"), nil
	}
	h.inv.updateItem = func(ctx context.Context, _ *inventoryv1.UpdateItemRequest) (*inventoryv1.Item, error) {
		// As the inventory service does: a tag that is not the item's
		// current one is 412 with the current tag in the ErrorInfo.
		if want := callmeta.IfMatchFromIncoming(ctx); want != "" && want != "v1" {
			return nil, rpcerr.Fail("inventory.portico.dev", typev1.Reason_REASON_ETAG_MISMATCH, "item keyboard-001 changed since its etag was read", "etag", "v1")
		}
		return item("v2"), nil
	}
	untagged := h.do("GET", "/api/inventory/untagged", readerToken, "")
	weak := untagged.header.Get("ETag")
	if !strings.HasPrefix(weak, `W/"`) {
		t.Fatalf("GET of an item without etag: ETag %q, want a weak tag", weak)
	}
	const path, patch = "/api/inventory/keyboard-001", `{"available": "2"}`
	tests := []struct {
		name, method, path, token, body string
		header                          []string
		status                          int
		code, etag, detail              string
		calls                           bool   // the upstream was called
		ifMatch                         string // the if-match metadata it got
	}{
		{name: "strong ETag", method: "GET", path: path, token: readerToken, status: 200, etag: `"v1"`, calls: true},
		{name: "304", method: "GET", path: path, token: readerToken, header: []string{`If-None-Match: "v1"`}, status: 304, etag: `"v1"`, calls: true},
		{name: "304 HEAD", method: "HEAD", path: path, token: readerToken, header: []string{`If-None-Match: "v1"`}, status: 304, etag: `"v1"`, calls: true},
		{name: "304 weak", method: "GET", path: path, token: readerToken, header: []string{`If-None-Match: W/"v1"`}, status: 304, etag: `"v1"`, calls: true},
		{name: "304 weak ETag", method: "GET", path: "/api/inventory/untagged", token: readerToken, header: []string{"If-None-Match: " + weak}, status: 304, etag: weak, calls: true},
		{name: "304 two lines", method: "GET", path: path, token: readerToken, header: []string{`If-None-Match: "a"`, `If-None-Match: "v1"`}, status: 304, etag: `"v1"`, calls: true},
		{name: "200 no match", method: "GET", path: path, token: readerToken, header: []string{`If-None-Match: "v0"`}, status: 200, etag: `"v1"`, calls: true},
		{name: "412 GET If-Match", method: "GET", path: path, token: readerToken, header: []string{`If-Match: "v0"`}, status: 412, code: "ETAG_MISMATCH", calls: true},
		{name: "412 GET weak If-Match", method: "GET", path: path, token: readerToken, header: []string{`If-Match: W/"v1"`}, status: 412, code: "ETAG_MISMATCH", calls: true},
		{name: "GET If-Match wins over If-None-Match", method: "GET", path: path, token: readerToken, header: []string{`If-Match: "v0"`, `If-None-Match: "v1"`}, status: 412, code: "ETAG_MISMATCH", calls: true},
		{name: "forwarded", method: "PATCH", path: path, token: adminToken, body: patch, header: []string{`If-Match: "v1"`}, status: 200, calls: true, ifMatch: "v1"},
		{name: "weak dropped", method: "PATCH", path: path, token: adminToken, body: patch, header: []string{`If-Match: W/"v0", "v1"`}, status: 200, calls: true, ifMatch: "v1"},
		{name: "star", method: "PATCH", path: path, token: adminToken, body: patch, header: []string{`If-Match: *`}, status: 200, calls: true},
		{name: "none", method: "PATCH", path: path, token: adminToken, body: patch, status: 200, calls: true},
		{name: "412 stale, with the current tag", method: "PATCH", path: path, token: adminToken, body: patch, header: []string{`If-Match: "v0"`}, status: 412, code: "ETAG_MISMATCH", etag: `"v1"`, calls: true, ifMatch: "v0"},
		// The service still decides first (403, 404 before 412): it gets a
		// tag no resource has.
		{name: "412 weak only", method: "PATCH", path: path, token: adminToken, body: patch, header: []string{`If-Match: W/"v1"`}, status: 412, code: "ETAG_MISMATCH", etag: `"v1"`, calls: true, ifMatch: neverMatches, detail: neverMatchDetail},
		{name: "412 non-ASCII tag", method: "PATCH", path: path, token: adminToken, body: patch, header: []string{"If-Match: \"\xc3\xa9\""}, status: 412, code: "ETAG_MISMATCH", etag: `"v1"`, calls: true, ifMatch: neverMatches, detail: neverMatchDetail},
		{name: "400 two strong", method: "PATCH", path: path, token: adminToken, body: patch, header: []string{`If-Match: "v1", "v2"`}, status: 400, code: "INVALID_CONDITIONAL_HEADER"},
		{name: "400 If-None-Match on PATCH", method: "PATCH", path: path, token: adminToken, body: patch, header: []string{`If-None-Match: *`}, status: 400, code: "INVALID_CONDITIONAL_HEADER"},
		{name: "400 no etag to compare", method: "POST", path: "/api/reservations/res-1:commit", token: adminToken, body: "{}", header: []string{`If-Match: "v1"`}, status: 400, code: "INVALID_CONDITIONAL_HEADER"},
		{name: "400 malformed", method: "GET", path: path, token: readerToken, header: []string{`If-None-Match: v1`}, status: 400, code: "INVALID_CONDITIONAL_HEADER"},
		{name: "400 too long", method: "GET", path: path, token: readerToken, header: []string{`If-None-Match: "` + strings.Repeat("a", 3000) + `"`}, status: 400, code: "INVALID_CONDITIONAL_HEADER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, before := h.inv.last()
			r := h.do(tt.method, tt.path, tt.token, tt.body, tt.header...)
			md, after := h.inv.last()
			if r.status != tt.status {
				t.Fatalf("%s %s %q = %d %s, want %d", tt.method, tt.path, tt.header, r.status, r.body, tt.status)
			}
			if tt.code != "" {
				if got := r.json(t)["code"]; got != tt.code {
					t.Errorf("code = %v, want %s", got, tt.code)
				}
				if tt.detail != "" && r.json(t)["detail"] != tt.detail {
					t.Errorf("detail = %q, want %q", r.json(t)["detail"], tt.detail)
				}
				if tt.code == "INVALID_CONDITIONAL_HEADER" && tt.method == "GET" && !strings.Contains(r.json(t)["detail"].(string), "If-None-Match") {
					t.Errorf("detail %q does not name the header", r.json(t)["detail"])
				}
			}
			if got := r.header.Get("ETag"); got != tt.etag {
				t.Errorf("ETag = %q, want %q", got, tt.etag)
			}
			if tt.status == http.StatusNotModified && (len(r.body) != 0 || r.header.Get("Content-Type") != "") {
				t.Errorf("304 with body %q, Content-Type %q", r.body, r.header.Get("Content-Type"))
			}
			if called := after > before; called != tt.calls {
				t.Errorf("upstream called = %v, want %v", called, tt.calls)
			}
			if tt.calls && tt.method != "GET" && tt.method != "HEAD" {
				if got := strings.Join(md.Get(callmeta.IfMatchKey), ","); got != tt.ifMatch {
					t.Errorf("if-match metadata = %q, want %q", got, tt.ifMatch)
				}
			}
		})
	}
}

// BenchmarkTagOf: the edge's cost of the ETag of a GET answer, strong
// (read from the etag field) and weak (a hash of a 50-item page).
func BenchmarkTagOf(b *testing.B) {
	page := &inventoryv1.ListItemsResponse{}
	for range 50 {
		page.Items = append(page.Items, &inventoryv1.Item{Sku: "keyboard-001", Name: "Mechanical Keyboard", Available: 41, Etag: "Xq3v0p8lJ1cWm2RkXq3v0p"})
	}
	strong := &endpoint{etagOut: etagField(page.Items[0].ProtoReflect().Descriptor())}
	b.Run("strong", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = tagOf(strong, page.Items[0])
		}
	})
	b.Run("weak item", func(b *testing.B) {
		b.ReportAllocs()
		item := &inventoryv1.Item{Sku: "keyboard-001", Name: "Mechanical Keyboard", Available: 41}
		for b.Loop() {
			_ = tagOf(strong, item)
		}
	})
	b.Run("weak page of 50", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = tagOf(&endpoint{}, page)
		}
	})
}

// TestWeakTagEquivalence: weakTag gives the tag of the plain
// Marshal-then-hash it replaced, for empty, small, large (beyond the
// pool's bound) and unmarshalable messages, in an order that reuses
// pooled buffers holding longer earlier bytes.
func TestWeakTagEquivalence(t *testing.T) {
	page := func(n int) *inventoryv1.ListItemsResponse {
		p := &inventoryv1.ListItemsResponse{}
		for i := range n {
			p.Items = append(p.Items, &inventoryv1.Item{Sku: fmt.Sprintf("sku-%d", i), Name: "Mechanical Keyboard", Available: int64(i)})
		}
		return p
	}
	tests := []struct {
		name string
		msg  proto.Message
	}{
		{"page of 50", page(50)},
		{"empty", &inventoryv1.Item{}},
		{"item", &inventoryv1.Item{Sku: "keyboard-001", Name: "K", Available: 1}},
		{"beyond pool bound", page(3000)},
		{"item after big", &inventoryv1.Item{Sku: "k"}},
		{"invalid UTF-8 (marshal fails)", &inventoryv1.Item{Sku: "ok", Name: "bad\xff"}},
		{"empty again", &inventoryv1.ListItemsResponse{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(tt.msg)
			sum := sha256.Sum256(b)
			want := etag.Weak(base64.RawURLEncoding.EncodeToString(sum[:16]))
			for range 2 {
				if got := tagOf(&endpoint{}, tt.msg); got != want {
					t.Fatalf("tagOf = %v, want %v", got, want)
				}
			}
		})
	}
}
