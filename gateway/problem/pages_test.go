package problem

import (
	"strings"
	"testing"
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
