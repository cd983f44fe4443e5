package gateway

import (
	"strconv"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestStaleHead: a HEAD runs the GET route, so while the upstream fails
// it answers as that GET would, the copy's 200 and headers without its
// body; while the upstream answers it is the live HEAD. A HEAD never
// keeps a copy: only a GET's whole body is kept.
func TestStaleHead(t *testing.T) {
	tests := []struct {
		name       string
		fill       string // the method answered while up, "" for none
		header     []string
		wantStatus int
		wantStale  bool
	}{
		{"filled by GET", "GET", nil, 200, true},
		{"filled by GET, if-none-match", "GET", []string{`If-None-Match: "tag-A"`}, 304, true},
		{"filled by HEAD only", "HEAD", nil, 503, false},
		{"never filled", "", nil, 503, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, f := staleHarness(t, setup{})
			var live response
			if tt.fill != "" {
				live = h.do(tt.fill, "/api/inventory/A", aliceToken, "")
				if live.status != 200 || live.header.Get("Age") != "" || live.header.Get("Cache-Status") != "" {
					t.Fatalf("live %s = %d %v, want 200 without Age or Cache-Status", tt.fill, live.status, live.header)
				}
			}
			f.set(status.Error(codes.Unavailable, "inventory down"))
			got := h.do("HEAD", "/api/inventory/A", aliceToken, "", tt.header...)
			if got.status != tt.wantStatus || len(got.body) != 0 {
				t.Fatalf("HEAD while failing = %d, %d body bytes; want %d, none", got.status, len(got.body), tt.wantStatus)
			}
			if !tt.wantStale {
				if got.header.Get("Age") != "" || got.header.Get("Cache-Status") != "" {
					t.Errorf("problem carries Age %q, Cache-Status %q", got.header.Get("Age"), got.header.Get("Cache-Status"))
				}
				return
			}
			if got.header.Get("Age") == "" || got.header.Get("Cache-Status") != "Portico; fwd=stale; detail=unavailable" ||
				got.header.Get("ETag") != `"tag-A"` {
				t.Errorf("stale HEAD headers = %v, want Age, Cache-Status and the copy's ETag", got.header)
			}
			if tt.wantStatus == 200 && (got.header.Get("Content-Type") != "application/json" ||
				got.header.Get("Content-Length") != strconv.Itoa(len(live.body))) {
				t.Errorf("stale HEAD Content-Type %q, Content-Length %q; want the GET's, application/json and %d",
					got.header.Get("Content-Type"), got.header.Get("Content-Length"), len(live.body))
			}
		})
	}
}

// TestHeadLive: while the upstream answers, a HEAD on a route keeping
// copies is the GET's answer without its body, carrying no stale header.
func TestHeadLive(t *testing.T) {
	h, _ := staleHarness(t, setup{})
	get := h.do("GET", "/api/inventory/A", aliceToken, "")
	got := h.do("HEAD", "/api/inventory/A", aliceToken, "")
	if got.status != 200 || len(got.body) != 0 || got.header.Get("ETag") != get.header.Get("ETag") ||
		got.header.Get("Content-Type") != get.header.Get("Content-Type") {
		t.Fatalf("live HEAD = %d %v %q, want the GET's 200 headers %v and no body", got.status, got.header, got.body, get.header)
	}
	if got.header.Get("Age") != "" || got.header.Get("Cache-Status") != "" {
		t.Errorf("live HEAD carries Age %q, Cache-Status %q", got.header.Get("Age"), got.header.Get("Cache-Status"))
	}
}
