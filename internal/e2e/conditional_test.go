package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestConditionalRequests drives ETag, If-None-Match and If-Match through
// the real edge in front of the real services: 200 with ETag, 304 (one
// tag, a weak copy, "*", a list), 400 for malformed or misplaced headers,
// 412 for a stale or weak If-Match, and the same refusal as gRPC
// FAILED_PRECONDITION from the service directly. Rows run in order: the
// PATCH rows change the item the later rows read.
func TestConditionalRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	e := startEdge(t, c, noBreaker, nil)
	const admin, reader, alice = "demo-admin-token", "demo-read-token", "demo-alice-token"
	item := e.url + "/api/inventory/keyboard-001"
	first := call(t, "GET", item, reader, "")
	tag0 := first.header.Get("ETag")
	if first.status != 200 || tag0 != `"`+bodyEtag(t, first)+`"` {
		t.Fatalf("GET item = %d, ETag %q, body %s; want 200 and the strong etag of the body", first.status, tag0, first.body)
	}
	list := call(t, "GET", e.url+"/api/inventory", reader, "")
	listTag := list.header.Get("ETag")
	if list.status != 200 || !strings.HasPrefix(listTag, `W/"`) {
		t.Fatalf("GET list = %d, ETag %q; want 200 and a weak ETag", list.status, listTag)
	}
	var tag1 string // the item's etag after the successful PATCH
	patch := `{"available": "77"}`
	rows := []struct {
		name, method, url, token, body string
		headers                        func() []string
		status                         int
		code                           string
	}{
		{"200 other tag", "GET", item, reader, "", h("If-None-Match: \"nope\""), 200, ""},
		{"304 same tag", "GET", item, reader, "", h("If-None-Match: " + tag0), 304, ""},
		{"304 weak copy of the tag", "GET", item, reader, "", h("If-None-Match: W/" + tag0), 304, ""},
		{"304 star", "GET", item, reader, "", h("If-None-Match: *"), 304, ""},
		{"304 in a list", "GET", item, reader, "", h(`If-None-Match: "a", W/"b", ` + tag0), 304, ""},
		{"304 list route", "GET", e.url + "/api/inventory", reader, "", h("If-None-Match: " + listTag), 304, ""},
		{"200 GET If-Match current", "GET", item, reader, "", h("If-Match: " + tag0), 200, ""},
		{"412 GET If-Match other", "GET", item, reader, "", h(`If-Match: "nope"`), 412, "ETAG_MISMATCH"},
		{"400 malformed If-None-Match", "GET", item, reader, "", h("If-None-Match: nope"), 400, "INVALID_CONDITIONAL_HEADER"},
		{"400 too many tags", "GET", item, reader, "", h("If-None-Match: " + strings.Repeat(`"a",`, 40) + `"b"`), 400, "INVALID_CONDITIONAL_HEADER"},
		{"400 If-None-Match on PATCH", "PATCH", item, admin, patch, h("If-None-Match: *"), 400, "INVALID_CONDITIONAL_HEADER"},
		{"400 If-Match without an etag", "POST", e.url + "/api/reservations/res-1:commit", admin, "{}", h(`If-Match: "x"`), 400, "INVALID_CONDITIONAL_HEADER"},
		{"400 malformed If-Match", "PATCH", item, admin, patch, h("If-Match: x"), 400, "INVALID_CONDITIONAL_HEADER"},
		{"412 weak If-Match", "PATCH", item, admin, patch, h("If-Match: W/" + tag0), 412, "ETAG_MISMATCH"},
		{"404 before 412: weak If-Match on no item", "PATCH", e.url + "/api/inventory/no-such-item", admin, patch, h("If-Match: W/" + tag0), 404, "ITEM_NOT_FOUND"},
		{"412 stale If-Match", "PATCH", item, admin, patch, h(`If-Match: "stale"`), 412, "ETAG_MISMATCH"},
		{"200 current If-Match", "PATCH", item, admin, patch, h("If-Match: " + tag0), 200, ""},
		{"412 the old tag", "PATCH", item, admin, patch, h("If-Match: " + tag0), 412, "ETAG_MISMATCH"},
		{"200 new tag", "PATCH", item, admin, patch, func() []string { return []string{"If-Match: " + tag1} }, 200, ""},
		{"200 old tag no longer 304", "GET", item, reader, "", h("If-None-Match: " + tag0), 200, ""},
		{"200 If-Match star", "PATCH", item, admin, patch, h("If-Match: *"), 200, ""},
	}
	for _, r := range rows {
		got := call(t, r.method, r.url, r.token, r.body, r.headers()...)
		if got.status != r.status || got.code() != r.code {
			t.Errorf("%s: %s %s = %d %s, want %d %s; body %s", r.name, r.method, r.url, got.status, got.code(), r.status, r.code, got.body)
			continue
		}
		switch {
		case r.status == 304:
			if len(got.body) != 0 || got.header.Get("ETag") == "" {
				t.Errorf("%s: 304 with body %q, ETag %q; want no body and the ETag", r.name, got.body, got.header.Get("ETag"))
			}
		case r.status >= 400:
			checkProblem(t, got, strings.TrimPrefix(r.url, e.url))
		case r.method == "PATCH":
			if tag1 == "" {
				tag1 = `"` + bodyEtag(t, got) + `"`
			}
			if got.header.Get("ETag") != "" {
				t.Errorf("%s: PATCH answered ETag %q; only GET answers carry one", r.name, got.header.Get("ETag"))
			}
		}
	}
	if tag1 == "" || tag1 == tag0 {
		t.Fatalf("etag after the PATCH = %s, before %s: want a new one", tag1, tag0)
	}

	// gRPC callers: the same refusal from the service, with the current etag.
	_, err := c.Inventory.UpdateItem(as(t, "admin", "admin", ""), &inventoryv1.UpdateItemRequest{
		Item:       &inventoryv1.Item{Sku: "keyboard-001", Available: 5},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"available"}},
		Etag:       strings.Trim(tag0, `"`),
	})
	if status.Code(err) != codes.FailedPrecondition || rpcerr.Reason(err) != "ETAG_MISMATCH" {
		t.Errorf("UpdateItem with a stale etag over gRPC = %v; want FAILED_PRECONDITION ETAG_MISMATCH", err)
	}

	// An order: the cancel is conditional, and repeating a cancel that
	// succeeded answers 200 whatever the tag (RFC 9110 section 13.1.1).
	created := call(t, "POST", e.url+"/api/orders", alice, orderBodyFor("mouse-001", 1, "pm_card_ok"), "Idempotency-Key: cond-1")
	if created.status != 201 {
		t.Fatalf("POST /api/orders = %d %s", created.status, created.body)
	}
	order := e.url + "/api/orders/" + jsonField(t, created, "id")
	got := call(t, "GET", order, alice, "")
	otag := got.header.Get("ETag")
	if otag != `"`+bodyEtag(t, got)+`"` {
		t.Fatalf("GET order ETag %q, body %s", otag, got.body)
	}
	for _, r := range []struct {
		name, tag string
		status    int
	}{{"stale", `"stale"`, 412}, {"current", otag, 200}, {"again with the old tag", otag, 200}} {
		got := call(t, "POST", order+":cancel", alice, "{}", "If-Match: "+r.tag)
		if got.status != r.status {
			t.Errorf("cancel with %s If-Match = %d %s, want %d", r.name, got.status, got.body, r.status)
		}
	}
}

// h returns headers as a row's header function.
func h(headers ...string) func() []string { return func() []string { return headers } }

func bodyEtag(t *testing.T, r reply) string { return jsonField(t, r, "etag") }

func jsonField(t *testing.T, r reply, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	s, _ := m[name].(string)
	if s == "" {
		t.Fatalf("body %s has no %s", r.body, name)
	}
	return s
}
