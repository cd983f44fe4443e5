package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStreams watches and exports an order through the edge and the real
// order service, in both framings, as a Go client sees them.
func TestStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	e := startEdge(t, c, noBreaker, nil)
	r := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBodyFor("keyboard-001", 1, "pm_card_ok"), "Idempotency-Key: stream-1")
	var o struct{ ID, Status string }
	if err := json.Unmarshal(r.body, &o); err != nil || r.status != 201 {
		t.Fatalf("POST /api/orders = %d %s", r.status, r.body)
	}
	watch := e.url + "/api/orders/" + o.ID + ":watch"
	t.Run("ndjson", func(t *testing.T) {
		r := call(t, "GET", watch, "demo-alice-token", "")
		lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
		var last struct {
			Result *struct{ ID, Status string }
			Error  any
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || r.status != 200 ||
			r.header.Get("Content-Type") != "application/x-ndjson" || last.Result == nil || last.Result.Status != "CONFIRMED" || last.Error != nil {
			t.Fatalf("GET :watch = %d %q %s, want NDJSON ending with the CONFIRMED order", r.status, r.header.Get("Content-Type"), r.body)
		}
	})
	t.Run("sse", func(t *testing.T) {
		r := call(t, "GET", watch, "demo-alice-token", "", "Accept: text/event-stream")
		body := string(r.body)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") ||
			!strings.Contains(body, `"status":"CONFIRMED"`) || !strings.HasSuffix(body, "event: end\ndata: {}\n\n") {
			t.Fatalf("GET :watch (SSE) = %d %q %q, want events ending with event: end", r.status, r.header.Get("Content-Type"), body)
		}
	})
	t.Run("another customer's order is 404", func(t *testing.T) {
		r := call(t, "GET", watch, "demo-bob-token", "", "Accept: text/event-stream")
		if r.status != 404 || r.code() != "ORDER_NOT_FOUND" {
			t.Fatalf("bob's watch = %d %s, want 404 ORDER_NOT_FOUND", r.status, r.body)
		}
		checkProblem(t, r, "/api/orders/"+o.ID+":watch")
	})
	t.Run("unservable Accept is 406", func(t *testing.T) {
		r := call(t, "GET", watch, "demo-alice-token", "", "Accept: application/json")
		if r.status != 406 || r.code() != "NOT_ACCEPTABLE" {
			t.Fatalf("watch with Accept: application/json = %d %s, want 406", r.status, r.body)
		}
	})
	t.Run("csv export", func(t *testing.T) {
		r := call(t, "GET", e.url+"/api/orders:export?format=CSV", "demo-alice-token", "")
		if r.status != 200 || r.header.Get("Content-Type") != "text/csv; charset=utf-8" ||
			!strings.HasPrefix(string(r.body), "id,customer,status") || !strings.Contains(string(r.body), o.ID+",alice,CONFIRMED") {
			t.Fatalf("GET :export = %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
		}
	})
}
