package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/testproc"
)

const createOrder = "/portico.order.v1.OrderService/CreateOrder"

// drillProfile is the order upstream of the breaker drill: 240ms timeout,
// breaker open after 2 consecutive failures, 800ms cool-down, one
// half-open probe.
const drillProfile = `timeout: 240ms
resilience:
  breaker: {consecutive_failures: 2, cool_down: 800ms, half_open_probes: 1}
`

// TestBreakerSequence: order is 350ms slow behind a 240ms timeout, so
// two POSTs time out (504), the third is refused at once (503
// CIRCUIT_OPEN) without reaching order; after the cool-down one probe goes
// through, fails and reopens the circuit, and a good probe closes it. The
// edge's /metrics show every transition and that no call was retried, so
// order received exactly the calls that were not refused. The cool-downs
// are real (these are processes): the test polls until the breaker lets a
// call through instead of sleeping through them. Concurrent probes in
// half-open are bounded by package breaker's tests.
func TestBreakerSequence(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t, "--faults", "delay=350ms,method="+createOrder)
	e := startEdge(t, c, noBreaker, map[string]string{"order": drillProfile})
	sent := 0
	post := func() reply {
		sent++
		return call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBody, fmt.Sprintf("Idempotency-Key: slow-%d", sent))
	}
	transitions := func(from, to string) float64 {
		return metric(t, e, `portico_upstream_breaker_transitions_total{breaker="order",from="`+from+`",to="`+to+`"}`)
	}
	for i := range 2 {
		if r := post(); r.status != 504 || r.code() != "UPSTREAM_TIMEOUT" {
			t.Fatalf("request %d = %d %s, want 504 UPSTREAM_TIMEOUT", i+1, r.status, r.body)
		}
	}
	r := post()
	if r.status != 503 || r.code() != "CIRCUIT_OPEN" || r.header.Get("Retry-After") == "" {
		t.Fatalf("third request = %d %s (Retry-After %q), want 503 CIRCUIT_OPEN", r.status, r.body, r.header.Get("Retry-After"))
	}
	checkProblem(t, r, "/api/orders")
	if n := transitions("closed", "open"); n != 1 {
		t.Fatalf("closed->open transitions = %v, want 1", n)
	}

	// Open: every POST is refused at the edge until the cool-down ends;
	// the first one after it is the probe, which times out and reopens.
	var probe reply
	if !testproc.WaitFor(t.Context(), 10*time.Second, func(ctxT) bool {
		probe = post()
		return probe.code() != "CIRCUIT_OPEN"
	}) {
		t.Fatal("the circuit never let a probe through")
	}
	if probe.status != 504 || probe.code() != "UPSTREAM_TIMEOUT" {
		t.Fatalf("probe = %d %s, want 504 UPSTREAM_TIMEOUT", probe.status, probe.body)
	}
	if n := transitions("half-open", "open"); n != 1 {
		t.Errorf("half-open->open transitions = %v, want 1 (the failed probe reopens)", n)
	}

	// A fast probe (ListOrders is not slowed) closes the breaker.
	if !testproc.WaitFor(t.Context(), 10*time.Second, func(ctxT) bool {
		return call(t, "GET", e.url+"/api/orders", "demo-alice-token", "").status == 200
	}) {
		t.Fatal("the good probe never closed the circuit")
	}
	if r := call(t, "GET", e.url+"/api/orders", "demo-alice-token", ""); r.status != 200 {
		t.Errorf("after a good probe = %d %s, want 200 (closed)", r.status, r.body)
	}
	if n := transitions("half-open", "closed"); n != 1 {
		t.Errorf("half-open->closed transitions = %v, want 1", n)
	}
	if n := transitions("open", "half-open"); n != 2 {
		t.Errorf("open->half-open transitions = %v, want 2", n)
	}
	// Three POSTs got past the breaker (two timeouts, one probe), each as
	// one attempt: order saw three CreateOrder calls, however many were
	// refused while it was open.
	if n := metric(t, e, `portico_upstream_retries_total{upstream="order"}`); n != 0 {
		t.Errorf("order retries = %v, want 0: timeouts are not retried", n)
	}
	// Order logs a call the edge gave up on once its handler sees the
	// cancellation, which may come after the edge's 504: wait for the
	// three, then callsSeen's marker shows there is no fourth.
	c.ord.WaitOutput(t.Context(), 10*time.Second, func(o string) bool { return accessCount(o, createOrder) >= 3 })
	if n := callsSeen(t, c.ord, c.orderAddr, createOrder); n != 3 {
		t.Errorf("order saw %d CreateOrder calls for %d POSTs, want 3 (two timeouts and the probe)", n, sent)
	}
}

// TestInventoryDownOrderEntry: with inventory down, an item read before
// answers its kept copy marked stale (staleReads), POST /api/orders fails
// with 503 within its deadline, nothing is confirmed or charged, and reads
// of orders still work.
func TestInventoryDownOrderEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	e := startEdge(t, c, "", map[string]string{"order": drillProfile})
	ok := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: before")
	if ok.status != 201 {
		t.Fatalf("baseline order = %d %s", ok.status, ok.body)
	}
	item := e.url + "/api/inventory/keyboard-001"
	if r := call(t, "GET", item, "demo-alice-token", ""); r.status != 200 {
		t.Fatalf("GET item = %d %s", r.status, r.body)
	}
	c.inv.Kill()
	staleReads(t, e.url, item)
	// Three tries, more than the drill profile's breaker threshold: a live
	// order service answering "inventory is down" must not trip the edge's
	// order breaker, or GET /api/orders would fail too.
	for i := range 3 {
		r := call(t, "POST", e.url+"/api/orders", "demo-alice-token", orderBody, fmt.Sprintf("Idempotency-Key: during-%d", i), "Grpc-Timeout: 2S")
		if r.status != 503 || r.code() != "INVENTORY_UNAVAILABLE" || r.header.Get("Retry-After") == "" {
			t.Fatalf("POST %d with inventory down = %d %s, want 503 INVENTORY_UNAVAILABLE with Retry-After", i, r.status, r.body)
		}
		// 503 INVENTORY_UNAVAILABLE, not a 504 after Grpc-Timeout's 2s: the
		// order service answered that inventory is down instead of waiting.
	}
	list := call(t, "GET", e.url+"/api/orders", "demo-alice-token", "")
	if list.status != 200 {
		t.Fatalf("GET /api/orders = %d %s, want 200", list.status, list.body)
	}
	if n := strings.Count(string(list.body), `"CONFIRMED"`); n != 1 {
		t.Errorf("%d CONFIRMED orders, want only the baseline one: %s", n, list.body)
	}
	if n := callsSeen(t, c.pay, c.payAddr, "/portico.payment.v1.PaymentService/CreatePayment"); n != 1 {
		t.Errorf("payment saw %d CreatePayment calls, want 1 (the baseline)", n)
	}
}

// TestInstanceKilledUnderLoad: two inventory instances, one killed while
// GETs flow: no client sees an error (retries go to the other instance, and
// round robin drops the dead one from the pool), and it serves again once
// it is back.
func TestInstanceKilledUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	addrB := testproc.Addr(testproc.FreePort(t))
	dbB := c.db("inventory-b")
	b := testproc.Start(t, bin, "inventory-b", "inventory", "--listen", addrB, "--db", dbB, "--identity-keys", c.keysFile)
	testproc.WaitServing(t, b, addrB)
	e := startEdge(t, c, "", map[string]string{"inventory": fmt.Sprintf(
		"addresses: [%s, %s]\nresilience:\n  ejection: {consecutive_failures: 1, base_time: 300ms, max_time: 1s}\n", c.invAddr, addrB)})
	get := func() int {
		return call(t, "GET", e.url+"/api/inventory/keyboard-001", "demo-read-token", "").status
	}
	const getItem = inv + "GetItem"
	var failures []int
	for i := range 200 { // bounded: 200 requests, each with a 15s client timeout
		if i == 50 {
			b.Kill()
		}
		if s := get(); s != 200 {
			failures = append(failures, i)
		}
	}
	if len(failures) > 0 {
		t.Errorf("%d GETs failed (at %v); want none while one instance survives", len(failures), failures)
	}

	// Bring b back on the same address: after its ejection ends it serves again.
	b2 := testproc.Start(t, bin, "inventory-b2", "inventory", "--listen", addrB, "--db", dbB, "--identity-keys", c.keysFile)
	testproc.WaitServing(t, b2, addrB)
	back := testproc.WaitFor(t.Context(), 10*time.Second, func(ctxT) bool {
		get()
		return accessCount(b2.Output(), getItem) > 0
	})
	if !back {
		t.Error("restarted instance never received traffic again")
	}
}

// TestNoRetryStorm: with an upstream failing every call, upstream attempts
// stay within 1 + the retry budget ratio of client requests (plus the
// budget's small per-second floor).
func TestNoRetryStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startClusterWith(t, []string{"--faults", "code=UNAVAILABLE,method=" + inv + "GetItem"}, nil)
	e := startEdge(t, c, noBreaker, nil)
	const n = 100
	start := time.Now()
	for range n {
		if s := call(t, "GET", e.url+"/api/inventory/keyboard-001", "demo-read-token", "").status; s != 503 {
			t.Fatalf("status %d, want 503 from an upstream answering UNAVAILABLE", s)
		}
	}
	secs := time.Since(start).Seconds()
	// One instance, no breaker: every request's first attempt and every
	// retry reached it, and the edge counted the retries before answering.
	attempts := n + int(metric(t, e, `portico_upstream_retries_total{upstream="inventory"}`))
	// Budget: ratio 0.2 of requests, plus a floor of 3 retries/s over the
	// 10s window (at most 30 when the whole run fits in one window).
	limit := int(n*1.2 + 3*max(secs, 10) + 1)
	t.Logf("%d requests -> %d upstream attempts in %.1fs (limit %d)", n, attempts, secs, limit)
	if attempts > limit {
		t.Errorf("%d attempts for %d requests, want at most %d", attempts, n, limit)
	}
	if attempts <= n {
		t.Errorf("%d attempts for %d requests: retries never happened, so this test proves nothing", attempts, n)
	}
}

// TestFailingInstanceEjected: an instance that is up (health SERVING) but
// fails every call is ejected by passive outlier detection: clients see no
// errors, and it gets only a few calls before and between ejections.
func TestFailingInstanceEjected(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	addrB := testproc.Addr(testproc.FreePort(t))
	b := testproc.Start(t, bin, "inventory-bad", "inventory", "--listen", addrB, "--db", c.db("inventory-b"), "--identity-keys", c.keysFile,
		"--faults", "code=UNAVAILABLE,method="+inv+"GetItem")
	testproc.WaitServing(t, b, addrB)
	e := startEdge(t, c, noBreaker, map[string]string{"inventory": fmt.Sprintf(
		"addresses: [%s, %s]\nresilience:\n  breaker: {consecutive_failures: 100000, min_calls: 100000}\n"+
			"  ejection: {consecutive_failures: 2, base_time: 10s}\n", c.invAddr, addrB)})
	const n = 100
	for i := range n {
		if r := call(t, "GET", e.url+"/api/inventory/keyboard-001", "demo-read-token", ""); r.status != 200 {
			t.Fatalf("GET %d = %d %s; want every GET served by the good instance", i, r.status, r.body)
		}
	}
	// The good instance never fails and every client got a 200, so each
	// call the failing instance received was retried once: its calls are
	// the edge's retries.
	if got := metric(t, e, `portico_upstream_retries_total{upstream="inventory"}`); got > 10 {
		t.Errorf("failing instance got %v of %d calls; ejection should stop it after 2", got, n)
	}
	if got := metric(t, e, `portico_upstream_ejections_total{upstream="inventory"}`); got != 1 {
		t.Errorf("inventory ejections = %v, want 1", got)
	}
}

// TestReloadAddsInstance: SIGHUP with a config listing a new inventory
// instance adds it without a restart; the old one can then go away.
func TestReloadAddsInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	e := startEdge(t, c, "", nil)
	addrB := testproc.Addr(testproc.FreePort(t))
	b := testproc.Start(t, bin, "inventory-b", "inventory", "--listen", addrB, "--db", c.db("inventory-b"), "--identity-keys", c.keysFile)
	testproc.WaitServing(t, b, addrB)

	path := filepath.Join(c.dir, "gateway.yaml")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	listen := strings.TrimPrefix(e.url, "http://")
	cfg := edgeConfig(c, listen, "", map[string]string{"inventory": fmt.Sprintf("addresses: [%s, %s]\n", c.invAddr, addrB)})
	if cfg == string(old) {
		t.Fatal("new config equals the old one")
	}
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(e.proc.Pid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !waitLog(t, e.proc, "config audit") { // the applied change
		t.Fatalf("edge never applied the reload:\n%s", e.proc.Output())
	}
	c.inv.Kill()
	for i := range 20 {
		if r := call(t, "GET", e.url+"/api/inventory/keyboard-001", "demo-read-token", ""); r.status != 200 {
			t.Fatalf("GET %d after the old instance died = %d %s", i, r.status, r.body)
		}
	}
	// Those 200s came from the added instance: the old one is dead.
	if !testproc.WaitFor(t.Context(), 10*time.Second, func(ctxT) bool {
		return call(t, "GET", e.url+"/health", "", "").status == 200
	}) {
		t.Error("/health never followed the reload to the live instance")
	}
	// A broken file is rejected and the running config stays.
	if err := os.WriteFile(path, []byte("listn: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(e.proc.Pid(), syscall.SIGHUP)
	if !waitLog(t, e.proc, "reload rejected; keeping the running config") {
		t.Error("a broken config was not reported")
	}
	if r := call(t, "GET", e.url+"/api/inventory/keyboard-001", "demo-read-token", ""); r.status != 200 {
		t.Errorf("after a rejected reload = %d", r.status)
	}
}

// staleReads checks the reads of the "inventory is down" answer,
// item having been read by alice before inventory died: alice gets it 200
// with Age and Cache-Status fwd=stale, the body of an item; a caller of
// another role (the reader) gets no copy of hers, an item never read gets
// the usual problem, and so does alice when she refuses stale answers.
func staleReads(t *testing.T, edge, item string) {
	t.Helper()
	r := call(t, "GET", item, "demo-alice-token", "")
	age, err := strconv.Atoi(r.header.Get("Age"))
	if r.status != 200 || err != nil || age < 0 || age > 60 || !strings.Contains(r.header.Get("Cache-Status"), "fwd=stale") ||
		!strings.Contains(string(r.body), `"sku":"keyboard-001"`) {
		t.Errorf("GET a read item with inventory down = %d Age %q Cache-Status %q %s, want 200 stale with its Age",
			r.status, r.header.Get("Age"), r.header.Get("Cache-Status"), r.body)
	}
	for _, tt := range []struct{ name, url, token, header string }{
		{"another role's copy", item, "demo-read-token", ""},
		{"never read", edge + "/api/inventory/webcam-001", "demo-alice-token", ""},
		{"stale refused", item, "demo-alice-token", "Cache-Control: no-cache"},
	} {
		var hs []string
		if tt.header != "" {
			hs = append(hs, tt.header)
		}
		r := call(t, "GET", tt.url, tt.token, "", hs...)
		if (r.status != 502 && r.status != 503) || r.header.Get("Cache-Status") != "" || r.code() == "" {
			t.Errorf("%s: GET = %d Cache-Status %q %s, want the 502/503 problem", tt.name, r.status, r.header.Get("Cache-Status"), r.body)
		}
	}
}
