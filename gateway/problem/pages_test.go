package problem

import (
	"strings"
	"testing"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestPages: every code has a page with a title, a status, and a text that
// says whether to retry; slugs are unique.
func TestPages(t *testing.T) {
	pages := Pages()
	if len(pages) != len(Codes()) {
		t.Fatalf("Pages() has %d pages, Codes() %d codes", len(pages), len(Codes()))
	}
	slugs := map[string]string{}
	for _, p := range pages {
		t.Run(p.Code, func(t *testing.T) {
			if p.Title == "" || p.Status < 400 || p.Status > 599 || p.Slug != Slug(p.Code) {
				t.Errorf("page = %+v, want a title, a 4xx/5xx status and slug %s", p, Slug(p.Code))
			}
			if !strings.Contains(strings.ToLower(p.Doc), "retry") {
				t.Errorf("doc %q does not say whether to retry", p.Doc)
			}
			if p.RetryAfter && !strings.Contains(p.Doc, "Retry-After") {
				t.Errorf("doc %q: problems carry Retry-After, the doc should say to wait for it", p.Doc)
			}
			if prev, ok := slugs[p.Slug]; ok {
				t.Errorf("slug %s of %s is also %s's", p.Slug, p.Code, prev)
			}
			slugs[p.Slug] = p.Code
			if TypeURI(p.Code) != TypeBase+p.Slug {
				t.Errorf("TypeURI(%s) = %s, want %s%s", p.Code, TypeURI(p.Code), TypeBase, p.Slug)
			}
		})
	}
}

// TestPageTextHasOneSource: a reason's doc option is set exactly when the
// edge's catalogue has no text for the same code, so no text is written
// twice and none is missing.
func TestPageTextHasOneSource(t *testing.T) {
	values := typev1.Reason(0).Descriptor().Values()
	for i := 1; i < values.Len(); i++ {
		r := typev1.Reason(values.Get(i).Number())
		name := rpcerr.ReasonName(r)
		_, inCatalogue := catalogue[name]
		if hasDoc := rpcerr.ReasonDoc(r) != ""; hasDoc == inCatalogue {
			t.Errorf("%s: doc option set %v, catalogue entry %v; want exactly one", r, hasDoc, inCatalogue)
		}
	}
	for code, e := range catalogue {
		if e.doc == "" {
			t.Errorf("catalogue %s has no doc", code)
		}
	}
}

// TestPageStatusIsAnswered: a page states the status and the Retry-After
// that problems with its code really have.
func TestPageStatusIsAnswered(t *testing.T) {
	for _, p := range Pages() {
		if s, ok := codeStatus(p.Code); !ok || s != p.Status {
			t.Errorf("page %s says %d, problems are answered %d", p.Code, p.Status, s)
		}
	}
	for _, tt := range []struct {
		code  string
		retry bool
	}{{CodeCircuitOpen, true}, {CodeResourceExhausted, true}, {"INVENTORY_UNAVAILABLE", true}, {CodeMessageTooLarge, false}, {CodeNotFound, false}} {
		if got := pageOf(tt.code).RetryAfter; got != tt.retry {
			t.Errorf("pageOf(%s).RetryAfter = %v, want %v", tt.code, got, tt.retry)
		}
	}
}
