package gateway

import (
	"cmp"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/edgemetrics"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/route"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// failSwitch is an upstream failure switched on demand; nil answers.
type failSwitch struct{ err atomic.Pointer[error] }

func (f *failSwitch) set(err error) { f.err.Store(&err) }
func (f *failSwitch) get() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

// staleHarness is the edge whose inventory GetItem and order GetOrder
// answer until fail is set; GET /api/orders/{id} keeps per-caller copies
// by override (its RPC has no option).
func staleHarness(t testing.TB, su setup) (*harness, *failSwitch) {
	t.Helper()
	f := &failSwitch{}
	cfg := su.cfg
	su.cfg = func(c *config.Config) {
		c.Routes.Overrides = map[string]config.RouteOverride{"GET /api/orders/{id}": {StaleIfError: config.StaleOverride{MaxStale: time.Minute}}}
		if cfg != nil {
			cfg(c)
		}
	}
	h := newHarness(t, su)
	h.inv.getItem = func(_ context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		if err := f.get(); err != nil {
			return nil, err
		}
		return &inventoryv1.Item{Sku: r.GetSku(), Name: "Widget " + r.GetSku(), Available: 7, Etag: "tag-" + r.GetSku()}, nil
	}
	h.order.getOrder = func(ctx context.Context, r *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		if err := f.get(); err != nil {
			return nil, err
		}
		return &orderv1.Order{Id: r.GetId()}, nil
	}
	h.inv.listItems = func(_ context.Context, r *inventoryv1.ListItemsRequest) (*inventoryv1.ListItemsResponse, error) {
		if err := f.get(); err != nil {
			return nil, err
		}
		return &inventoryv1.ListItemsResponse{Items: []*inventoryv1.Item{{Sku: "A"}}}, nil
	}
	return h, f
}

// TestStaleIfError: after a 200, each upstream failure of the 502/503/504
// kind answers the copy with Age and Cache-Status; other failures, a
// request never answered, and a client refusing stale answers get the
// problem.
func TestStaleIfError(t *testing.T) {
	unavailable := status.Error(codes.Unavailable, "inventory down")
	tests := []struct {
		name       string
		err        error
		path       string
		header     []string
		wantStatus int
		wantDetail string // Cache-Status detail when stale
	}{
		{"unavailable", unavailable, "/api/inventory/A", nil, 200, "unavailable"},
		{"circuit open", rpcerr.New(codes.Unavailable, "resilience.portico.dev", "CIRCUIT_OPEN", "breaker open", "upstream", "inventory"), "/api/inventory/A", nil, 200, "circuit-open"},
		{"overloaded", rpcerr.New(codes.Unavailable, "resilience.portico.dev", "OVERLOADED", "shedding", "upstream", "inventory"), "/api/inventory/A", nil, 200, "overloaded"},
		{"timeout", status.Error(codes.DeadlineExceeded, "slow"), "/api/inventory/A", nil, 200, "timeout"},
		{"not found is answered", status.Error(codes.NotFound, "gone"), "/api/inventory/A", nil, 404, ""},
		{"internal is answered", status.Error(codes.Internal, "bug"), "/api/inventory/A", nil, 500, ""},
		{"never seen", unavailable, "/api/inventory/NEVER", nil, 503, ""},
		{"no-cache", unavailable, "/api/inventory/A", []string{"Cache-Control: no-cache"}, 503, ""},
		{"max-stale=0", unavailable, "/api/inventory/A", []string{"Cache-Control: max-stale=0"}, 503, ""},
		{"max-stale=60", unavailable, "/api/inventory/A", []string{"Cache-Control: max-stale=60"}, 200, "unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, f := staleHarness(t, setup{})
			if n, ok := staleSeries(t, h, "/api/inventory/{sku}", "timeout"); !ok || n != 0 {
				t.Fatalf("stale_answers_total{timeout} before any answer = %v, %v; want a zero series", n, ok)
			}
			first := h.do("GET", "/api/inventory/A", aliceToken, "")
			if first.status != 200 || first.header.Get("Age") != "" || first.header.Get("Cache-Status") != "" {
				t.Fatalf("first GET = %d %v, want 200 without Age or Cache-Status", first.status, first.header)
			}
			f.set(tt.err)
			got := h.do("GET", tt.path, aliceToken, "", tt.header...)
			if got.status != tt.wantStatus {
				t.Fatalf("GET %s while failing = %d %s, want %d", tt.path, got.status, got.body, tt.wantStatus)
			}
			if tt.wantDetail == "" {
				if got.header.Get("Age") != "" || got.header.Get("Cache-Status") != "" {
					t.Errorf("problem carries Age %q, Cache-Status %q", got.header.Get("Age"), got.header.Get("Cache-Status"))
				}
				return
			}
			if string(got.body) != string(first.body) {
				t.Errorf("stale body = %s, want the copy %s", got.body, first.body)
			}
			if want := "Portico; fwd=stale; detail=" + tt.wantDetail; got.header.Get("Cache-Status") != want {
				t.Errorf("Cache-Status = %q, want %q", got.header.Get("Cache-Status"), want)
			}
			if got.header.Get("Age") == "" || got.header.Get("Content-Type") != "application/json" ||
				got.header.Get("X-Trace-Id") == "" || got.header.Get("Cache-Control") != "no-store" {
				t.Errorf("stale headers = %v, want Age, JSON, X-Trace-Id and no-store", got.header)
			}
			if n := staleCount(t, h, "/api/inventory/{sku}", tt.wantDetail); n != 1 {
				t.Errorf("portico_gateway_stale_answers_total{reason=%q} = %v, want 1", tt.wantDetail, n)
			}
		})
	}
}

// TestStaleConditional: a stale answer carries the ETag of the answer it
// copies and judges If-None-Match (304) and If-Match (412, strong
// comparison) on it, as a live GET does.
func TestStaleConditional(t *testing.T) {
	tests := []struct {
		name       string
		header     string
		wantStatus int
	}{
		{"unconditional", "", 200},
		{"if-none-match current", `If-None-Match: "tag-A"`, 304},
		{"if-none-match weak current", `If-None-Match: W/"tag-A"`, 304},
		{"if-none-match any", "If-None-Match: *", 304},
		{"if-none-match other", `If-None-Match: "other"`, 200},
		{"if-match current", `If-Match: "other", "tag-A"`, 200},
		{"if-match any", "If-Match: *", 200},
		{"if-match other", `If-Match: "other"`, 412},
		{"if-match weak", `If-Match: W/"tag-A"`, 412},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, f := staleHarness(t, setup{})
			first := h.do("GET", "/api/inventory/A", aliceToken, "")
			if first.status != 200 || first.header.Get("ETag") != `"tag-A"` {
				t.Fatalf("first GET = %d, ETag %q; want 200, \"tag-A\"", first.status, first.header.Get("ETag"))
			}
			f.set(status.Error(codes.Unavailable, "inventory down"))
			var hdr []string
			if tt.header != "" {
				hdr = []string{tt.header}
			}
			got := h.do("GET", "/api/inventory/A", aliceToken, "", hdr...)
			if got.status != tt.wantStatus {
				t.Fatalf("stale GET with %q = %d %s, want %d", tt.header, got.status, got.body, tt.wantStatus)
			}
			if got.header.Get("Cache-Status") == "" || got.header.Get("Age") == "" {
				t.Errorf("stale answer headers = %v, want Age and Cache-Status", got.header)
			}
			switch tt.wantStatus {
			case 412:
				if code := got.json(t)["code"]; code != "ETAG_MISMATCH" || got.header.Get("ETag") != "" {
					t.Errorf("412 code = %v, ETag %q; want ETAG_MISMATCH, no ETag", code, got.header.Get("ETag"))
				}
			case 304:
				if len(got.body) != 0 || got.header.Get("ETag") != `"tag-A"` {
					t.Errorf("304 = body %q, ETag %q; want no body, the copy's ETag", got.body, got.header.Get("ETag"))
				}
			default:
				if got.header.Get("ETag") != `"tag-A"` || string(got.body) != string(first.body) {
					t.Errorf("stale 200 = ETag %q, body %s; want the copy's", got.header.Get("ETag"), got.body)
				}
			}
		})
	}
}

// TestStaleUnreachable: with the upstream's server gone, the copy is
// answered (502's reason, unreachable); a SKU never answered is 502.
func TestStaleUnreachable(t *testing.T) {
	h, _ := staleHarness(t, setup{})
	if got := h.do("GET", "/api/inventory/A", aliceToken, ""); got.status != 200 {
		t.Fatalf("GET = %d %s", got.status, got.body)
	}
	h.servers["inventory"].Stop()
	got := h.do("GET", "/api/inventory/A", aliceToken, "")
	if got.status != 200 || got.header.Get("Cache-Status") != "Portico; fwd=stale; detail=unreachable" {
		t.Errorf("GET with inventory stopped = %d %q, want 200 stale, unreachable", got.status, got.header.Get("Cache-Status"))
	}
	if got := h.do("GET", "/api/inventory/B", aliceToken, ""); got.status != 502 {
		t.Errorf("GET never-seen with inventory stopped = %d %s, want 502", got.status, got.body)
	}
}

// TestStaleScope: a per-caller route's copy goes to its caller only; a
// public route's copy goes to callers with the same granted role only.
func TestStaleScope(t *testing.T) {
	tests := []struct {
		name, path, storer, asker, askPath string
		want                               int
	}{
		{"caller route, same caller", "/api/orders/o1", aliceToken, aliceToken, "", 200},
		{"caller route, other caller", "/api/orders/o1", aliceToken, bobToken, "", 503},
		{"public route, same role", "/api/inventory/A", aliceToken, bobToken, "", 200},
		{"public route, other role", "/api/inventory/A", adminToken, readerToken, "", 503},
		{"same query", "/api/inventory?pageSize=1", aliceToken, aliceToken, "", 200},
		{"other query", "/api/inventory?pageSize=1", aliceToken, aliceToken, "/api/inventory?pageSize=2", 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, f := staleHarness(t, setup{})
			if got := h.do("GET", tt.path, tt.storer, ""); got.status != 200 {
				t.Fatalf("GET %s = %d %s", tt.path, got.status, got.body)
			}
			f.set(status.Error(codes.Unavailable, "down"))
			ask := cmp.Or(tt.askPath, tt.path)
			if got := h.do("GET", ask, tt.asker, ""); got.status != tt.want {
				t.Errorf("GET %s while failing = %d %s, want %d", ask, got.status, got.body, tt.want)
			}
		})
	}
}

// TestStaleAge runs the keeping and answering of a copy in a synctest
// bubble, whose clock the edge reads: a copy 90s old says Age: 90; at the
// route's max_stale it is still answered, past it the problem is. (The
// harness tests above run the same code through a real edge and
// upstream; their gRPC calls cannot run in a bubble, whose clock would
// jump to the call's deadline while the call waits on the network.)
func TestStaleAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := edgemetrics.New(prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{copies: newStaleCopies(), metrics: m}
		s.copies.setMax(1 << 20)
		rule := &staleRule{maxStale: 5 * time.Minute, public: true}
		ep := &endpoint{Route: inventoryRoute(t, "GET /api/inventory/{sku}"), stale: rule}
		exchangeFor := func() (*exchange, *httptest.ResponseRecorder, *http.Request) {
			r := httptest.NewRequest("GET", "/api/inventory/A", nil)
			rec := httptest.NewRecorder()
			ex := &exchange{snap: &snapshot{}, ep: ep, route: "/api/inventory/{sku}"}
			ex.rw = responseWriter{ResponseWriter: rec, ex: ex}
			s.startCapture(ex, r)
			ex.stale.msg = &inventoryv1.GetItemRequest{Sku: "A"} // as captureConn records the call's
			return ex, rec, r
		}
		ex, _, _ := exchangeFor()
		ex.rw.Header().Set("Content-Type", "application/json")
		_, _ = ex.rw.Write([]byte(`{"sku":"A"}`))
		s.keepCopy(&ex.rw, ex)

		down := problem.FromStatus(status.New(codes.Unavailable, "down"), problem.Facts{Upstream: "inventory", Trailer: true})
		answer := func() (bool, string) {
			ex, rec, r := exchangeFor()
			ok := s.serveStale(&ex.rw, r, ex, down)
			s.keepCopy(&ex.rw, ex) // as serveAPI does after every call: a stale answer must not renew the copy
			return ok, rec.Header().Get("Age")
		}
		for _, step := range []struct {
			wait    time.Duration
			wantOK  bool
			wantAge string
		}{
			{0, true, "0"},
			{90 * time.Second, true, "90"},
			{210 * time.Second, true, "300"}, // max_stale itself is still answered
			{time.Second, false, ""},
		} {
			time.Sleep(step.wait)
			if ok, age := answer(); ok != step.wantOK || age != step.wantAge {
				t.Errorf("serveStale at %v = %v, Age %q; want %v, %q", time.Since(time.Unix(946684800, 0)), ok, age, step.wantOK, step.wantAge)
			}
		}
	})
}

// inventoryRoute is the inventory service's route key ("METHOD PATTERN").
func inventoryRoute(t testing.TB, key string) *route.Route {
	t.Helper()
	rs, err := route.FromService(inventoryv1.File_portico_inventory_v1_inventory_proto.Services().Get(0), "inventory")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Key() == key {
			return r
		}
	}
	t.Fatalf("the inventory service has no route %s", key)
	return nil
}

// TestStaleConfig: overrides turn copies off, change max_stale, and are
// refused on a write.
func TestStaleConfig(t *testing.T) {
	tests := []struct {
		name    string
		ov      map[string]config.RouteOverride
		stale   config.StaleConfig
		want    int
		wantErr string
	}{
		{"off by override", map[string]config.RouteOverride{"GET /api/inventory/{sku}": {StaleIfError: config.StaleOverride{MaxStale: -1}}}, config.StaleConfig{}, 503, ""},
		{"off by max_bytes", nil, config.StaleConfig{MaxBytes: -1}, 503, ""},
		{"on by default", nil, config.StaleConfig{}, 200, ""},
		{"write refused", map[string]config.RouteOverride{"POST /api/orders": {StaleIfError: config.StaleOverride{MaxStale: time.Minute}}}, config.StaleConfig{}, 0, "GET routes only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Dev(0)
			cfg.Routes.Overrides, cfg.Stale = tt.ov, tt.stale
			if tt.wantErr != "" {
				if _, err := New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New() = %v, want %q", err, tt.wantErr)
				}
				return
			}
			h, f := staleHarness(t, setup{cfg: func(c *config.Config) {
				for k, v := range tt.ov {
					c.Routes.Overrides[k] = v
				}
				c.Stale = tt.stale
			}})
			h.do("GET", "/api/inventory/A", aliceToken, "")
			f.set(status.Error(codes.Unavailable, "down"))
			if got := h.do("GET", "/api/inventory/A", aliceToken, ""); got.status != tt.want {
				t.Errorf("GET while failing = %d, want %d", got.status, tt.want)
			}
		})
	}
}

// TestStaleRedisShared: a copy one edge kept is answered by another edge
// sharing its Redis.
func TestStaleRedisShared(t *testing.T) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		t.Skip("REDIS_URL is not set: skipping the shared copies test")
	}
	prefix := fmt.Sprintf("portico:test:stale:%d:", time.Now().UnixNano())
	shared := func(c *config.Config) { c.Redis.URL, c.Stale.Redis.Prefix = url, prefix }
	a, _ := staleHarness(t, setup{cfg: shared})
	b, fb := staleHarness(t, setup{cfg: shared})
	fb.set(status.Error(codes.Unavailable, "down"))
	if got := a.do("GET", "/api/inventory/A", aliceToken, ""); got.status != 200 {
		t.Fatalf("GET on edge a = %d", got.status)
	}
	// a's copy is written to Redis in the background: wait for its writer.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.srv.snap.Load().staleShared.shared.Flush(ctx); err != nil {
		t.Fatalf("flushing edge a's copies: %v", err)
	}
	got := b.do("GET", "/api/inventory/A", aliceToken, "")
	if got.status != 200 || got.header.Get("Cache-Status") == "" {
		t.Fatalf("edge b = %d %v %s, want edge a's copy with Cache-Status", got.status, got.header, got.body)
	}
}

// TestStaleRedisDown: with Redis unreachable, copies are kept and
// answered locally and no request fails for it.
func TestStaleRedisDown(t *testing.T) {
	h, f := staleHarness(t, setup{cfg: func(c *config.Config) { c.Redis.URL = "redis://" + closedAddr(t) + "/0" }})
	if got := h.do("GET", "/api/inventory/A", aliceToken, ""); got.status != 200 {
		t.Fatalf("GET with Redis down = %d %s, want 200", got.status, got.body)
	}
	f.set(status.Error(codes.Unavailable, "down"))
	if got := h.do("GET", "/api/inventory/A", aliceToken, ""); got.status != 200 || got.header.Get("Age") == "" {
		t.Errorf("GET failing with Redis down = %d, want the local copy", got.status)
	}
	if got := h.do("GET", "/api/inventory/B", aliceToken, ""); got.status != 503 {
		t.Errorf("GET never-seen with Redis down = %d %s, want 503", got.status, got.body)
	}
}

// serve calls the edge's handler on the calling goroutine (in a synctest
// bubble: with the bubble's clock), without a network hop to the edge.
func (h *harness) serve(method, path, token string) response {
	h.t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.srv.Handler().ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// staleCount reads portico_gateway_stale_answers_total{route, reason}.
func staleCount(t *testing.T, h *harness, route, reason string) float64 {
	t.Helper()
	n, _ := staleSeries(t, h, route, reason)
	return n
}

// staleSeries reads the series, and whether it exists.
func staleSeries(t *testing.T, h *harness, route, reason string) (float64, bool) {
	t.Helper()
	mfs, err := h.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "portico_gateway_stale_answers_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["route"] == route && l["reason"] == reason {
				return m.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}

var _ prometheus.Collector = staleGauge{}
