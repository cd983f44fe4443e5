package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// TestAcceptedForLater: with inventory killed, POST /api/orders without a
// preference is 503 as before; with Prefer: respond-async it is 202 with
// Location and Preference-Applied, the order ACCEPTED. Once inventory is
// back the reconciler confirms it: one committed reservation (one unit
// sold) and one capture.
func TestAcceptedForLater(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t, "--reconcile-interval", "200ms")
	e := startEdge(t, c, "", nil)
	before := item(t, c, "keyboard-001")
	c.inv.Kill()

	plain := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: plain")
	if plain.status != 503 || plain.code() != "INVENTORY_UNAVAILABLE" {
		t.Fatalf("POST without Prefer = %d %s, want 503 INVENTORY_UNAVAILABLE", plain.status, plain.body)
	}
	r := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: later", "Prefer: wait=5, respond-async")
	if r.status != 202 || r.header.Get("Preference-Applied") != "respond-async" {
		t.Fatalf("POST with Prefer: respond-async = %d %s (Preference-Applied %q), want 202 applied",
			r.status, r.body, r.header.Get("Preference-Applied"))
	}
	loc := r.header.Get("Location")
	if got := orderStatus(t, call(t, "GET", e.url+loc, "demo-alice-token", "")); !strings.HasPrefix(loc, "/api/orders/ord-") || got != "ACCEPTED" {
		t.Fatalf("Location %q: order %s, want ACCEPTED", loc, got)
	}
	id := strings.TrimPrefix(loc, "/api/orders/")

	c.startInventory()
	if !c.ord.WaitOutput(t.Context(), 30*time.Second, func(out string) bool {
		return reconciled(out, id)
	}) {
		t.Fatalf("the reconciler did not run order %s within 30s", id)
	}
	got := call(t, "GET", e.url+loc, "demo-alice-token", "")
	if s := orderStatus(t, got); s != "CONFIRMED" {
		t.Fatalf("GET %s after inventory returned = %s %s, want CONFIRMED", loc, s, got.body)
	}
	var o struct {
		ID            string `json:"id"`
		ReservationID string `json:"reservationId"`
	}
	if err := json.Unmarshal(got.body, &o); err != nil {
		t.Fatal(err)
	}
	checkConfirmed(t, c, &orderv1.Order{Id: o.ID, ReservationId: o.ReservationID})
	if after := item(t, c, "keyboard-001"); after.GetSold() != before.GetSold()+1 || after.GetReserved() != before.GetReserved() {
		t.Errorf("stock %+v after, %+v before: want one more sold and nothing left reserved", after, before)
	}
}

// orderStatus is the status member of an order answer.
func orderStatus(t *testing.T, r reply) string {
	t.Helper()
	var o struct{ Status string }
	if err := json.Unmarshal(r.body, &o); err != nil {
		t.Fatalf("%s: %v in %s", r.url, err, r.body)
	}
	return o.Status
}

// reconciled reports whether the order service's output has the line of
// the reconciler settling order id.
func reconciled(out, id string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `"msg":"reconciled accepted order"`) && strings.Contains(l, id) {
			return true
		}
	}
	return false
}

// TestAcceptedPerCustomerFlag: portico order --max-accepted-per-customer 1
// with inventory killed: alice's first POST with Prefer: respond-async is
// 202, her second 503 INVENTORY_UNAVAILABLE without Preference-Applied and
// a detail naming her limit; bob's is still 202.
func TestAcceptedPerCustomerFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t, "--max-accepted-per-customer", "1")
	e := startEdge(t, c, "", nil)
	c.inv.Kill()
	async := "Prefer: respond-async"
	if r := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: a1", async); r.status != 202 {
		t.Fatalf("alice's first POST = %d %s, want 202", r.status, r.body)
	}
	r := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: a2", async)
	detail, _ := r.problem["detail"].(string)
	if r.status != 503 || r.code() != "INVENTORY_UNAVAILABLE" || r.header.Get("Preference-Applied") != "" ||
		!strings.Contains(detail, "at their limit") {
		t.Fatalf("alice's second POST = %d %s (Preference-Applied %q), want 503 INVENTORY_UNAVAILABLE naming her limit, not applied",
			r.status, r.body, r.header.Get("Preference-Applied"))
	}
	if r := call(t, "POST", e.url+"/api/orders", "demo-bob-token", orderBody, "Idempotency-Key: b1", async); r.status != 202 {
		t.Fatalf("bob's POST = %d %s, want 202", r.status, r.body)
	}
}
