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
// (package browsertest) with a real EventSource. With inventory down the
// test places the order with Prefer: respond-async (202, ACCEPTED); the
// page asks POST /api/stream-tickets (bearer token) for a ticket bound to
// GET /api/orders/{id}:watch and opens new EventSource(ticket url): it sees
// ACCEPTED; the test brings inventory back, the reconciler confirms the
// order, and the EventSource receives every state up to CONFIRMED, then
// `event: end`. The page also shows that an EventSource without a ticket is
// refused (401 closes it) and that the used ticket opens nothing again.
// Real processes (startCluster, as TestAcceptedForLater) rather than
// `portico dev`: the order must stay unsettled while the browser watches,
// which needs inventory stopped alone. Screenshots:
// var/screenshots/TestWatchInBrowser/.
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
		BareEventSource string
		TicketStatus    int
		Ended           string
		Reused          int
		Events          []struct{ Event, Data string }
	}
	if err := json.Unmarshal(res.Data, &got); err != nil {
		t.Fatalf("scenario data %s: %v", res.Data, err)
	}
	if got.BareEventSource != "closed" {
		t.Errorf("EventSource without a ticket: %s, want closed (refused)", got.BareEventSource)
	}
	if got.TicketStatus != 200 || got.Ended != "end" {
		t.Fatalf("POST /api/stream-tickets = %d; EventSource ended with %q, want 200 and end; events %+v", got.TicketStatus, got.Ended, got.Events)
	}
	if got.Reused != 401 {
		t.Errorf("GET with the used ticket = %d, want 401", got.Reused)
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
