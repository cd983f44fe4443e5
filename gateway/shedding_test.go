package gateway

import (
	"bufio"
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/problem"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// heldInventory makes the harness's GetItem wait until release is closed,
// announcing each call on entered, so a test can fill the caps.
type heldInventory struct {
	entered chan string
	release chan struct{}
}

func holdGetItem(h *harness) *heldInventory {
	hi := &heldInventory{entered: make(chan string, 16), release: make(chan struct{})}
	h.inv.getItem = func(_ context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		hi.entered <- r.GetSku()
		<-hi.release
		return &inventoryv1.Item{Sku: r.GetSku()}, nil
	}
	h.t.(*testing.T).Cleanup(func() { hi.releaseAll() })
	return hi
}

func (hi *heldInventory) releaseAll() {
	select {
	case <-hi.release:
	default:
		close(hi.release)
	}
}

// hold sends n GetItem requests in the background and waits until each
// reached the upstream; the returned channel yields their statuses.
func (hi *heldInventory) hold(t *testing.T, h *harness, n int) <-chan int {
	t.Helper()
	statuses := make(chan int, n)
	for i := range n {
		go func() {
			req, _ := http.NewRequest(http.MethodGet, h.http.URL+"/api/inventory/held-"+string(rune('a'+i)), nil)
			req.Header.Set("Authorization", "Bearer "+readerToken)
			resp, err := h.http.Client().Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	for range n {
		select {
		case <-hi.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("held requests did not reach the upstream")
		}
	}
	return statuses
}

// readWatcher is a request body that records whether anything read it.
type readWatcher struct{ read atomic.Bool }

func (b *readWatcher) Read(p []byte) (int, error) {
	b.read.Store(true)
	return 0, http.ErrBodyReadAfterClose
}
func (b *readWatcher) Close() error { return nil }

func checkOverloaded(t *testing.T, status int, header http.Header, body map[string]any, wantDetail string) {
	t.Helper()
	if status != http.StatusServiceUnavailable {
		t.Fatalf("status = %d, want 503", status)
	}
	for k, want := range map[string]string{"Content-Type": problem.ContentType, "Retry-After": "2", "Cache-Control": "no-store"} {
		if got := header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if header.Get(traceHeader) == "" || header.Get(traceHeader) != body["traceId"] {
		t.Errorf("X-Trace-Id = %q, traceId = %v; want the same non-empty id", header.Get(traceHeader), body["traceId"])
	}
	for k, want := range map[string]any{"code": "OVERLOADED", "status": float64(503), "type": "/problems/overloaded",
		"retryAfter": float64(2), "instance": "/api/inventory/kb-1"} {
		if body[k] != want {
			t.Errorf("body %s = %v, want %v", k, body[k], want)
		}
	}
	if d, _ := body["detail"].(string); !strings.Contains(d, wantDetail) {
		t.Errorf("detail = %q, want it to mention %q", d, wantDetail)
	}
}

func TestShedEdgeCap(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Shed = config.ShedConfig{MaxInFlight: 2, MaxInFlightPerCaller: -1, RetryAfter: 1500 * time.Millisecond}
	}})
	hi := holdGetItem(h)
	held := hi.hold(t, h, 2) // the edge's two slots are taken
	_, before := h.inv.last()
	logBefore := len(h.logs.lines(t, "request"))

	// Refused before its body is read: the handler is called directly, so
	// net/http's own draining after the handler cannot hide a read.
	body := &readWatcher{}
	req := httptest.NewRequest(http.MethodPost, "/api/inventory/kb-1", nil)
	req.Body = body
	req.Header.Set("Authorization", "Bearer "+adminToken)
	rec := httptest.NewRecorder()
	h.srv.Handler().ServeHTTP(rec, req)
	res := response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	checkOverloaded(t, res.status, res.header, res.json(t), "limit of requests in flight")
	if body.read.Load() {
		t.Error("the shed request's body was read, want it untouched")
	}

	// Over HTTP, a GET is refused alike; operational endpoints are not capped.
	res = h.do(http.MethodGet, "/api/inventory/kb-1", readerToken, "")
	checkOverloaded(t, res.status, res.header, res.json(t), "limit of requests in flight")
	if live := h.do(http.MethodGet, "/healthz/live", "", ""); live.status != http.StatusOK {
		t.Errorf("/healthz/live at the cap = %d, want 200", live.status)
	}
	if _, after := h.inv.last(); after != before {
		t.Errorf("upstream saw %d calls while shedding, want none", after-before)
	}
	if n := len(h.logs.lines(t, "request")) - logBefore; n != 1 { // the /healthz/live line only
		t.Errorf("%d access lines while shedding, want only /healthz/live's", n)
	}
	if got := counterValue(t, h.srv.snap.Load().shed.edgeScope); got != 2 {
		t.Errorf("portico_gateway_shed_total{scope=edge} = %v, want 2", got)
	}

	// Admitted requests are unaffected, and slots come back.
	hi.releaseAll()
	for range 2 {
		if s := <-held; s != http.StatusOK {
			t.Errorf("held request = %d, want 200", s)
		}
	}
	if res := h.do(http.MethodGet, "/api/inventory/kb-1", readerToken, ""); res.status != http.StatusOK {
		t.Errorf("request after the slots came back = %d, want 200", res.status)
	}
	if got := h.srv.snap.Load().shed.edge.InFlight(); got != 0 {
		t.Errorf("edge in flight at rest = %d, want 0", got)
	}
	if n := len(h.logs.lines(t, "shedding load")); n != 1 {
		t.Errorf("%d shedding load lines, want 1 (at most one a second)", n)
	}
}

func TestShedRouteGroupCap(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Shed = config.ShedConfig{RetryAfter: 2 * time.Second, Groups: []config.ShedGroupConfig{
			{Name: "item-reads", Routes: []string{"GET /api/inventory/{sku}"}, MaxInFlight: 1},
		}}
	}})
	h.inv.listItems = func(context.Context, *inventoryv1.ListItemsRequest) (*inventoryv1.ListItemsResponse, error) {
		return &inventoryv1.ListItemsResponse{}, nil
	}
	hi := holdGetItem(h)
	held := hi.hold(t, h, 1)

	res := h.do(http.MethodGet, "/api/inventory/kb-1", readerToken, "")
	checkOverloaded(t, res.status, res.header, res.json(t), "for the item-reads routes")
	if other := h.do(http.MethodGet, "/api/inventory", readerToken, ""); other.status != http.StatusOK {
		t.Errorf("a route outside the full group = %d, want 200", other.status)
	}
	if got := h.srv.snap.Load().shed.edge.InFlight(); got != 1 {
		t.Errorf("edge in flight = %d, want 1: a group refusal gives its edge slot back", got)
	}
	hi.releaseAll()
	if s := <-held; s != http.StatusOK {
		t.Errorf("held request = %d, want 200", s)
	}
}

func TestShedWaitHonoursGrpcTimeout(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Shed = config.ShedConfig{MaxInFlight: 1, MaxInFlightPerCaller: -1, MaxWait: time.Minute, RetryAfter: 2 * time.Second}
	}})
	hi := holdGetItem(h)
	held := hi.hold(t, h, 1)
	start := time.Now()
	res := h.do(http.MethodGet, "/api/inventory/kb-1", readerToken, "", "Grpc-Timeout: 50m")
	checkOverloaded(t, res.status, res.header, res.json(t), "limit of requests in flight")
	if waited := time.Since(start); waited > 30*time.Second {
		t.Errorf("waited %v for a slot, want about the client's 50ms Grpc-Timeout, not max_wait", waited)
	}
	hi.releaseAll()
	<-held
}

func TestShedConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		shed config.ShedConfig
		want string
	}{
		{"negative wait", config.ShedConfig{MaxWait: -time.Second}, "shed.max_wait"},
		{"negative retry after", config.ShedConfig{RetryAfter: -time.Second}, "shed.retry_after"},
		{"bad group name", config.ShedConfig{Groups: []config.ShedGroupConfig{{Name: "Bad Name", Routes: []string{"/api/orders"}, MaxInFlight: 1}}}, "shed.groups[0].name"},
		{"duplicate group", config.ShedConfig{Groups: []config.ShedGroupConfig{
			{Name: "a", Routes: []string{"/api/orders"}, MaxInFlight: 1},
			{Name: "a", Routes: []string{"/api/inventory"}, MaxInFlight: 1}}}, "shed.groups[1].name"},
		{"no routes", config.ShedConfig{Groups: []config.ShedGroupConfig{{Name: "a", MaxInFlight: 1}}}, "shed.groups[0].routes"},
		{"bad selector", config.ShedConfig{Groups: []config.ShedGroupConfig{{Name: "a", Routes: []string{"nonsense"}, MaxInFlight: 1}}}, "shed.groups[0].routes[0]"},
		{"zero cap", config.ShedConfig{Groups: []config.ShedGroupConfig{{Name: "a", Routes: []string{"/api/orders"}}}}, "shed.groups[0].max_in_flight"},
		{"per-client cap below -1", config.ShedConfig{MaxInFlightPerClient: -2}, "shed.max_in_flight_per_client: want a positive cap, or -1 for none, got -2"},
		{"per-caller cap below -1", config.ShedConfig{MaxInFlightPerCaller: -5}, "shed.max_in_flight_per_caller: want a positive cap, or -1 for none, got -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Dev(0)
			c.Shed = tt.shed
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want an error naming %s", err, tt.want)
			}
		})
	}
}

func TestBodyConfig(t *testing.T) {
	tests := []struct {
		name string
		http config.HTTPConfig
		want string // "" valid
	}{
		{"defaults", config.HTTPConfig{}, ""},
		{"off", config.HTTPConfig{BodyTimeout: -time.Second, MinBodyRate: -1}, ""},
		{"too short", config.HTTPConfig{BodyTimeout: time.Millisecond}, "http.body_timeout: want at least 100ms"},
		{"too long", config.HTTPConfig{BodyTimeout: 2 * time.Hour}, "http.body_timeout: want at most 1h0m0s"},
		{"rate below -1", config.HTTPConfig{MinBodyRate: -2}, "http.min_body_rate: want bytes a second (at most 1048576), or -1 for no minimum rate, got -2"},
		{"absurd rate", config.HTTPConfig{MinBodyRate: math.MaxInt64}, "http.min_body_rate: want bytes a second (at most 1048576)"},
		{"highest rate", config.HTTPConfig{MinBodyRate: config.MaxMinBodyRate}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Dev(0)
			c.HTTP = tt.http
			err := c.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
	rule := bodyRule(config.HTTPConfig{ReadTimeout: 5 * time.Second, BodyTimeout: 10 * time.Second, MinBodyRate: 1024})
	if rule.Timeout != 5*time.Second || rule.MinRate != 1024 || rule.Grace != bodyGrace {
		t.Errorf("bodyRule = %+v, want the timeout capped by read_timeout (5s), rate 1024, grace %v", rule, bodyGrace)
	}
	if rule := bodyRule(config.HTTPConfig{ReadTimeout: 30 * time.Second, BodyTimeout: -1, MinBodyRate: -1}); rule.Timeout != 30*time.Second || rule.MinRate > 0 {
		t.Errorf("bodyRule off = %+v, want read_timeout alone", rule)
	}
}

func TestShedGroupSelectsNoRoute(t *testing.T) {
	c := config.Dev(0)
	c.Shed.Groups = []config.ShedGroupConfig{{Name: "a", Routes: []string{"/api/nowhere"}, MaxInFlight: 1}}
	if _, err := New(context.Background(), c, WithLogger(discardLogger())); err == nil || !strings.Contains(err.Error(), "selects no route") {
		t.Errorf("New() = %v, want a selects-no-route error", err)
	}
}

func BenchmarkShedRefusal(b *testing.B) {
	h := newHarness(b, setup{cfg: func(c *config.Config) { c.Shed = config.ShedConfig{MaxInFlight: 1, MaxInFlightPerCaller: -1} }})
	h.srv.snap.Load().shed.edge.TryAcquire() // the one slot is taken: every request is refused
	handler := h.srv.Handler()
	benchGetItem(b, handler, http.StatusServiceUnavailable)
}

// BenchmarkShedRefusalHandler is the edge's own share of a refusal: the
// handler alone, into a reused ResponseWriter, so that neither
// httptest.NewRecorder's allocations nor net/http's floor hide it.
func BenchmarkShedRefusalHandler(b *testing.B) {
	h := newHarness(b, setup{cfg: func(c *config.Config) { c.Shed = config.ShedConfig{MaxInFlight: 1, MaxInFlightPerCaller: -1} }})
	h.srv.snap.Load().shed.edge.TryAcquire() // the one slot is taken: every request is refused
	handler := h.srv.Handler()
	req := httptest.NewRequest(http.MethodGet, "/api/inventory/kb-1", nil)
	req.Header.Set("Authorization", "Bearer "+readerToken)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		handler.ServeHTTP(w, req)
		if w.code != http.StatusServiceUnavailable {
			b.Fatalf("status %d", w.code)
		}
	}
}

func counterValue(t *testing.T, sc *shedScope) float64 {
	t.Helper()
	var m dto.Metric
	if err := sc.shed.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// BenchmarkShedRefusalHTTP is a refusal over a real keep-alive HTTP/1.1
// connection: net/http's read, parse and write around the handler, the
// cost that decides goodput under overload.
func BenchmarkShedRefusalHTTP(b *testing.B) {
	h := newHarness(b, setup{cfg: func(c *config.Config) { c.Shed = config.ShedConfig{MaxInFlight: 1, MaxInFlightPerCaller: -1} }})
	h.srv.snap.Load().shed.edge.TryAcquire() // the one slot is taken: every request is refused
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.http.URL, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	req := []byte("GET /api/inventory/kb-1 HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + readerToken + "\r\n\r\n")
	br := bufio.NewReader(conn)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// TestPerCallerCapBelowEdgeCap: left at its default, the per-caller cap
// leaves room under the edge's cap for other callers: a quarter of a
// small edge cap (dev's 64 → 16), else DefaultMaxInFlightPerCaller. With
// both at 64 (dev before), one caller filled the edge and every other
// caller got 503 OVERLOADED, not it 429 (found by the attacker review).
func TestPerCallerCapBelowEdgeCap(t *testing.T) {
	tests := []struct {
		name       string
		edge, want int
		caller     int
	}{
		{"dev", config.DevMaxInFlight, config.DevMaxInFlight / 4, 0},
		{"default edge cap", 0, config.DefaultMaxInFlightPerCaller, 0},
		{"tiny edge cap", 2, 1, 0},
		{"edge cap off", -1, config.DefaultMaxInFlightPerCaller, 0},
		{"set explicitly", 64, 64, 64},
		{"caller cap off", 64, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Config{Shed: config.ShedConfig{MaxInFlight: tt.edge, MaxInFlightPerCaller: tt.caller}}.WithDefaults().Shed
			if c.MaxInFlightPerCaller != tt.want {
				t.Errorf("per-caller cap = %d, want %d", c.MaxInFlightPerCaller, tt.want)
			}
		})
	}
	if got := config.Dev(0).WithDefaults().Shed; got.MaxInFlightPerCaller >= got.MaxInFlight {
		t.Errorf("dev: per-caller cap %d, edge cap %d: one caller can fill the edge", got.MaxInFlightPerCaller, got.MaxInFlight)
	}
}
