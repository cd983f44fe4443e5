package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/browsertest"
)

// TestWatchInBrowser watches an order settle from headless Chromium
// (package browsertest). With inventory down the test places the order with
// Prefer: respond-async (202, ACCEPTED); the page opens GET
// /api/orders/{id}:watch as text/event-stream and sees ACCEPTED; the test
// brings inventory back, the reconciler confirms the order, and the page
// sees every state up to CONFIRMED, then `event: end`.
//
// EventSource itself cannot carry the bearer token (it sends no custom
// headers) and the edge takes tokens only from Authorization (never from the
// URL: access_token in a query is refused; no cookie sessions). The page
// shows EventSource is refused (401 closes it), then reads the same stream
// with fetch() and parses the SSE frames. Real processes (startCluster, as
// TestAcceptedForLater) rather than `portico dev`: the order must stay
// unsettled while the browser watches, which needs inventory stopped alone.
// Screenshots: var/screenshots/TestWatchInBrowser/.
func TestWatchInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	b := browsertest.Find(t)
	c := startCluster(t, "--reconcile-interval", "200ms")
	e := startEdge(t, c, "", nil)
	c.inv.Kill()
	var id string
	res := b.Run(t, "testdata/browser/watch.mjs", browsertest.Options{
		URL:         e.url,
		Params:      map[string]string{"token": "demo-alice-token"},
		StepTimeout: time.Minute,
		Timeout:     4 * time.Minute,
		Ask: func(name string, _ json.RawMessage) (any, error) {
			switch name {
			case "place":
				r := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: watch-browser", "Prefer: respond-async")
				if r.status != 202 {
					return nil, fmt.Errorf("POST /api/orders = %d %s, want 202", r.status, r.body)
				}
				id = strings.TrimPrefix(r.header.Get("Location"), "/api/orders/")
				return map[string]string{"id": id}, nil
			case "restore-inventory":
				c.startInventory()
				return "started", nil
			}
			return nil, fmt.Errorf("unknown ask %q", name)
		},
	})
	var got struct {
		EventSource string
		Status      int
		Type        string
		Rest        string
		Events      []struct{ Event, Data string }
	}
	if err := json.Unmarshal(res.Data, &got); err != nil {
		t.Fatalf("scenario data %s: %v", res.Data, err)
	}
	if got.EventSource != "closed" {
		t.Errorf("EventSource without a token: %s, want closed (refused)", got.EventSource)
	}
	if got.Status != 200 || !strings.HasPrefix(got.Type, "text/event-stream") || got.Rest != "" {
		t.Fatalf("fetch stream: %d %q, left over %q", got.Status, got.Type, got.Rest)
	}
	var states []string
	for i, ev := range got.Events {
		if ev.Event == "end" {
			if i != len(got.Events)-1 {
				t.Errorf("event: end at %d of %d", i, len(got.Events))
			}
			continue
		}
		var o struct{ ID, Status string }
		if ev.Event != "message" || json.Unmarshal([]byte(ev.Data), &o) != nil || o.ID != id {
			t.Fatalf("event %d: %s %s, want an order %s", i, ev.Event, ev.Data, id)
		}
		states = append(states, o.Status)
	}
	if n := len(got.Events); n < 3 || got.Events[n-1].Event != "end" ||
		states[0] != "ACCEPTED" || states[len(states)-1] != "CONFIRMED" {
		t.Fatalf("events %+v, want ACCEPTED first, CONFIRMED last, then event: end", got.Events)
	}
	for _, e := range res.PageErrors {
		t.Errorf("page error: %s", e)
	}
	t.Logf("states seen in the browser: %v; screenshots %v", states, res.Screenshots)
}
