package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/health"
	genopenapi "github.com/portico-gateway/portico/gen/openapi"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

func TestHealth(t *testing.T) {
	tests := []struct {
		name       string
		su         setup
		prepare    func(*harness)
		wantStatus int
		want       health.Report
	}{
		{"all up", setup{}, nil, 200, report("UP", "UP", "UP", "UP")},
		{"one not serving", setup{}, func(h *harness) {
			h.health["order"].SetServingStatus("portico.order.v1.OrderService", healthpb.HealthCheckResponse_NOT_SERVING)
		}, 503, report("DEGRADED", "UP", "UP", "DOWN")},
		{"one unreachable", setup{down: []string{"payment"}}, nil, 503, report("DEGRADED", "UP", "DOWN", "UP")},
		{"one stopped", setup{}, func(h *harness) {
			h.servers["inventory"].Stop()
		}, 503, report("DEGRADED", "DOWN", "UP", "UP")},
		{"one hanging", setup{serve: map[string]grpc.UnaryServerInterceptor{"inventory": hangServer}}, nil,
			503, report("DEGRADED", "DOWN", "UP", "UP")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.su)
			if tt.prepare != nil {
				tt.prepare(h)
			}
			r := h.do("GET", "/health", "", "")
			if r.status != tt.wantStatus {
				t.Errorf("status = %d, want %d", r.status, tt.wantStatus)
			}
			var got health.Report
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatalf("body %s: %v", r.body, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("report (-want +got):\n%s", d)
			}
		})
	}
}

// TestHealthSharesProbeRounds: 600 concurrent unauthenticated /health
// calls make one round of upstream health checks, one call per upstream
// (they made 1,800: /health was an amplifier). The report is reused for
// an hour here so that the count does not depend on how fast the machine
// is; health.TestCheckSharesRounds pins the default age.
func TestHealthSharesProbeRounds(t *testing.T) {
	var calls sync.Map // upstream -> *atomic.Int64
	count := func(name string) grpc.UnaryServerInterceptor {
		n := &atomic.Int64{}
		calls.Store(name, n)
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
			if info.FullMethod == healthpb.Health_Check_FullMethodName {
				n.Add(1)
			}
			return next(ctx, req)
		}
	}
	h := newHarness(t, setup{
		serve: map[string]grpc.UnaryServerInterceptor{"inventory": count("inventory"), "payment": count("payment"), "order": count("order")},
		cfg:   func(c *config.Config) { c.Health.Timeout = 10 * time.Second }, // a busy machine's first connect
		opts:  []Option{func(o *options) { o.healthMaxAge = time.Hour }},
	})
	var wg sync.WaitGroup
	statuses := make([]int, 600)
	for i := range statuses {
		wg.Go(func() {
			resp, err := h.http.Client().Get(h.http.URL + "/health")
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	wg.Wait()
	if n := slices.IndexFunc(statuses, func(s int) bool { return s != 200 }); n >= 0 {
		t.Fatalf("/health call %d answered %d, want 200", n, statuses[n])
	}
	calls.Range(func(name, n any) bool {
		if got := n.(*atomic.Int64).Load(); got != 1 {
			t.Errorf("600 /health calls made %d health checks of %s, want 1", got, name)
		}
		return true
	})
}

// hangServer is a server interceptor that never answers before the
// caller's deadline.
func hangServer(ctx context.Context, _ any, _ *grpc.UnaryServerInfo, _ grpc.UnaryHandler) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func report(status, inv, pay, ord string) health.Report {
	return health.Report{Status: status, Service: "api-gateway", Dependencies: []health.DependencyStatus{
		{Name: "inventory", Status: inv}, {Name: "payment", Status: pay}, {Name: "order", Status: ord},
	}}
}

func TestLiveNeverTouchesUpstreams(t *testing.T) {
	h := newHarness(t, setup{down: []string{"inventory", "payment", "order"}})
	if r := h.do("GET", "/healthz/live", "", ""); r.status != 200 {
		t.Errorf("/healthz/live = %d, want 200", r.status)
	}
	if r := h.do("GET", "/healthz/ready", "", ""); r.status != 503 {
		t.Errorf("/healthz/ready before Serve = %d, want 503", r.status)
	}
}

// TestServeShutdown: ready while serving, 503 during the drain while
// requests are still served, in-flight requests finish, Serve returns nil.
// The test holds the drain open (drainWait) and learns of the in-flight
// call from the upstream stub, so nothing waits on the clock.
func TestServeShutdown(t *testing.T) {
	h := newHarness(t, setup{})
	called, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.order.getOrder = func(ctx context.Context, r *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		if r.GetId() == "ord-1" {
			once.Do(func() { close(called) })
			<-release
		}
		return &orderv1.Order{Id: r.GetId()}, nil
	}
	cfg := h.cfg
	cfg.DrainDelay = 300 * time.Millisecond
	srv, err := New(context.Background(), cfg, WithDialer(h.dial), WithLogger(discardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	draining, endDrain := make(chan time.Duration, 1), make(chan struct{})
	srv.drainWait = func(d time.Duration) {
		draining <- d
		<-endDrain
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + lis.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, lis) }()
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	if code := get(t, client, base+"/healthz/ready", ""); code != 200 {
		t.Fatalf("ready while serving = %d", code)
	}
	inflight := make(chan int, 1)
	go func() { inflight <- get(t, client, base+"/api/orders/ord-1", adminToken) }()
	await(t, called, "the upstream never got the in-flight call")
	cancel()
	select {
	case d := <-draining:
		if d != cfg.DrainDelay {
			t.Errorf("drain waited %v, want the configured %v", d, cfg.DrainDelay)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve never began the drain")
	}
	if code := get(t, client, base+"/healthz/ready", ""); code != 503 {
		t.Errorf("ready during drain = %d, want 503", code)
	}
	if code := get(t, client, base+"/healthz/live", ""); code != 200 {
		t.Errorf("live during drain = %d, want 200", code)
	}
	if code, conn := getConn(t, client, base+"/api/orders/ord-2", adminToken); code != 200 || conn != "close" {
		t.Errorf("a new request during drain = %d, Connection %q; want 200 (still served) and close", code, conn)
	}
	close(endDrain)
	close(release)
	if code := <-inflight; code != 200 {
		t.Errorf("in-flight request = %d, want 200", code)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve() = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	// After the drain a request is refused at connect, never cut halfway.
	client.CloseIdleConnections()
	if _, err := client.Get(base + "/healthz/live"); err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a request after the drain = %v, want connection refused", err)
	}
}

func getConn(t *testing.T, c *http.Client, url, token string) (int, string) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.Close {
		return resp.StatusCode, "close"
	}
	return resp.StatusCode, resp.Header.Get("Connection")
}

// waitState waits (bounded) until cc is in state want, asking it to
// connect while it is idle.
func waitState(t *testing.T, cc *grpc.ClientConn, want connectivity.State) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for st := cc.GetState(); st != want; st = cc.GetState() {
		cc.Connect()
		if !cc.WaitForStateChange(ctx, st) {
			t.Fatalf("connection stays %v, want %v", st, want)
		}
	}
}

// TestReadiness: /healthz/ready is 503 before serving, while a required
// upstream has no usable instance (ops.ready_requires), and while
// draining; /healthz/live stays 200 throughout.
func TestReadiness(t *testing.T) {
	h := newHarness(t, setup{down: []string{"payment"}, cfg: func(c *config.Config) { c.Ops.ReadyRequires = []string{"inventory"} }})
	ready := func() (int, string) {
		r := h.do("GET", "/healthz/ready", "", "")
		m := r.json(t)
		reason, _ := m["reason"].(string)
		return r.status, reason
	}
	if code, why := ready(); code != 503 || why != "not serving yet" {
		t.Errorf("ready before Serve = %d %q", code, why)
	}
	h.srv.serving.Store(true)
	waitState(t, h.srv.snap.Load().upstreams["inventory"].cc, connectivity.Ready)
	if code, why := ready(); code != 200 {
		t.Errorf("ready with inventory up (payment down, not required) = %d %q, want 200", code, why)
	}
	next := h.cfg
	next.Ops.ReadyRequires = []string{"inventory", "payment"}
	if _, err := h.srv.Reload(t.Context(), next, SourceAdmin); err != nil {
		t.Fatal(err)
	}
	// payment's connection goes to TRANSIENT_FAILURE once it has tried.
	waitState(t, h.srv.snap.Load().upstreams["payment"].cc, connectivity.TransientFailure)
	if code, why := ready(); code != 503 || why != "no usable instance of upstream payment" {
		t.Errorf("ready with required payment down = %d %q", code, why)
	}
	h.srv.draining.Store(true)
	if code, why := ready(); code != 503 || why != "draining" {
		t.Errorf("ready while draining = %d %q", code, why)
	}
	if r := h.do("GET", "/healthz/live", "", ""); r.status != 200 {
		t.Errorf("live = %d, want 200 whatever the upstreams", r.status)
	}
}

// await waits for ch to close, failing after a bound that only a broken
// build reaches.
func await(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal(msg)
	}
}

func get(t *testing.T, c *http.Client, url, token string) int {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestMetrics: the request series carry code, the HTTP status, as
// promhttp's do, and problem, the problem code; one in-flight gauge, by
// route.
func TestMetrics(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	h.do("GET", "/api/orders/ord-1", adminToken, "")
	h.do("GET", "/api/orders/ord-2", adminToken, "")
	h.do("GET", "/api/orders/ord-1", "", "")
	h.do("GET", "/api/nope/"+strings.Repeat("x", 10), adminToken, "")
	r := h.do("GET", "/metrics", adminToken, "")
	for _, want := range []string{
		`portico_gateway_requests_total{code="200",method="GET",problem="",route="/api/orders/{id}",upstream="order"} 2`,
		`portico_gateway_requests_total{code="401",method="GET",problem="UNAUTHENTICATED",route="/api/orders/{id}",upstream=""} 1`,
		`portico_gateway_requests_total{code="404",method="GET",problem="ROUTE_NOT_FOUND",route="unmatched",upstream=""} 1`,
		`portico_gateway_request_duration_seconds_count{code="200",method="GET",route="/api/orders/{id}",upstream="order"} 2`,
		`portico_gateway_requests_total{code="503",method="POST",problem="CIRCUIT_OPEN",route="/api/orders",upstream="order"} 0`,
		`portico_gateway_requests_in_flight{route="/api/orders/{id}"} 0`,
	} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(r.body), "portico_gateway_in_flight{") || strings.Contains(string(r.body), "\nportico_gateway_in_flight ") {
		t.Error("/metrics has portico_gateway_in_flight beside portico_gateway_requests_in_flight: one in-flight gauge")
	}
}

// TestOpenAPI: /openapi.json serves the generated document as is.
func TestOpenAPI(t *testing.T) {
	h := newHarness(t, setup{})
	r := h.do("GET", "/openapi.json", "", "")
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("/openapi.json = %d %s", r.status, r.header.Get("Content-Type"))
	}
	if !bytes.Equal(r.body, genopenapi.JSON) {
		t.Errorf("/openapi.json differs from gen/openapi/openapi.json: the edge must not rewrite it")
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.0.3" || doc.Paths["/api/orders"]["post"].OperationID != "createOrder" {
		t.Errorf("/openapi.json: openapi %q, POST /api/orders operationId %q", doc.OpenAPI, doc.Paths["/api/orders"]["post"].OperationID)
	}
}

// TestOpenAPIOperations: the document and the edge read the same options:
// every route the edge serves is an operation of the document, answering
// 201 with Location exactly where the edge sets a Location, and taking an
// Idempotency-Key exactly where the edge requires it.
func TestOpenAPIOperations(t *testing.T) {
	h := newHarness(t, setup{})
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Ref string `json:"$ref"`
			} `json:"parameters"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(genopenapi.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	snap := h.srv.snap.Load()
	for _, r := range snap.table.Routes() {
		op, ok := doc.Paths[r.Template][strings.ToLower(r.Method)]
		if !ok {
			t.Errorf("%s (%s) is not an operation of the document", r.Key(), r.RPC)
			continue
		}
		ep := snap.endpoints[r]
		_, created := op.Responses["201"]
		key := slices.ContainsFunc(op.Parameters, func(p struct {
			Ref string `json:"$ref"`
		}) bool {
			return strings.HasSuffix(p.Ref, "/IdempotencyKey")
		})
		_, async := op.Responses["202"]
		if created != (ep.location != nil) || key != ep.idempotencyKey || async != ep.respondAsync {
			t.Errorf("%s: document created=%v idempotencyKey=%v respondAsync=%v, edge location=%v idempotencyKey=%v respondAsync=%v",
				r.RPC, created, key, async, ep.location != nil, ep.idempotencyKey, ep.respondAsync)
		}
	}
}

// TestRegistrationList: the list alone decides what is served: one entry
// binding InventoryService to a new upstream name serves its routes under
// that name, and nothing else.
func TestRegistrationList(t *testing.T) {
	regs := []registration{{"catalog", "portico.inventory.v1.InventoryService", registrations[0].register}}
	h := newHarness(t, setup{
		regs: regs,
		cfg: func(c *config.Config) {
			c.Upstreams = []config.UpstreamConfig{{Name: "catalog", Addresses: []string{"x"}, Timeout: time.Second}}
		},
	})
	okStubs(h)
	if r := h.do("GET", "/api/inventory/a", adminToken, ""); r.status != 200 {
		t.Errorf("GET /api/inventory/a = %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/api/orders", adminToken, ""); r.status != 404 {
		t.Errorf("GET /api/orders = %d, want 404", r.status)
	}
	lines := h.logs.lines(t, "request")
	if lines[0]["upstream"] != "catalog" {
		t.Errorf("upstream = %v, want catalog", lines[0]["upstream"])
	}
	if r := h.do("GET", "/health", "", ""); !strings.Contains(string(r.body), `"name":"catalog"`) {
		t.Errorf("/health = %s, want catalog", r.body)
	}
}

// TestHealthBypassesClientChain: /health checks run over their own plain
// connections (Dial), never through the DialFunc's chain, so unauthenticated
// health traffic cannot feed a breaker and an open breaker cannot report a
// healthy upstream DOWN. Close closes those connections too.
func TestHealthBypassesClientChain(t *testing.T) {
	var calls atomic.Int32
	open := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		calls.Add(1)
		return status.Error(codes.Unavailable, "circuit open")
	}
	h := newHarness(t, setup{chain: map[string]grpc.UnaryClientInterceptor{"inventory": open}})
	for range 3 {
		r := h.do("GET", "/health", "", "")
		if r.status != 200 || !strings.Contains(string(r.body), `{"name":"inventory","status":"UP"}`) {
			t.Errorf("GET /health = %d %s, want 200 with inventory UP", r.status, r.body)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("/health went through the client chain %d times, want 0", n)
	}
	h.do("GET", "/api/inventory/a", adminToken, "")
	if n := calls.Load(); n != 1 {
		t.Fatalf("API call went through the client chain %d times, want 1", n)
	}
	ups := h.srv.snap.Load().upstreams
	if len(ups) != len(h.cfg.Upstreams) {
		t.Fatalf("health connections = %d, want one per upstream (%d)", len(ups), len(h.cfg.Upstreams))
	}
	live := map[string]*grpc.ClientConn{}
	for name, uc := range ups {
		live[name], _ = uc.probe.conn()
	}
	h.srv.Close()
	for name, cc := range live {
		if st := cc.GetState(); st != connectivity.Shutdown {
			t.Errorf("after Close, health connection to %s is %v, want SHUTDOWN", name, st)
		}
	}
}

// TestHealthUpMeansCallsGetThrough: an upstream that starts after the
// edge dialled it leaves the API connection in reconnect backoff while
// /health's own probe connects at once. /health stays DOWN until the API
// connection is ready (and ends its backoff), so the first call after
// /health says UP gets through rather than failing 502.
func TestHealthUpMeansCallsGetThrough(t *testing.T) {
	attempts := make(chan struct{}, 100)
	countDials := func(ctx context.Context, up config.UpstreamConfig) (*grpc.ClientConn, error) {
		if up.Name != "inventory" {
			return Dial(ctx, up)
		}
		return Dial(ctx, up, grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			attempts <- struct{}{}
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		}))
	}
	h := newHarness(t, setup{down: []string{"inventory"}, opts: []Option{WithDialer(countDials)}})
	h.inv.getItem = func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		return &inventoryv1.Item{Sku: "a"}, nil
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	// Four failed connects: the next backoff is about 650 ms, far longer
	// than the checks below take.
	for range 4 {
		select {
		case <-attempts:
		case <-ctx.Done():
			t.Fatal("the API connection did not try to connect four times")
		}
	}
	i := slices.IndexFunc(h.cfg.Upstreams, func(u config.UpstreamConfig) bool { return u.Name == "inventory" })
	h.startUpstreamAt(h.cfg.Upstreams[i].Addresses[0], h.cfg.Upstreams[i], nil)
	for r := h.do("GET", "/health", "", ""); r.status != 200; r = h.do("GET", "/health", "", "") {
		if ctx.Err() != nil {
			t.Fatalf("/health never UP after inventory started: %d %s", r.status, r.body)
		}
	}
	if r := h.do("GET", "/api/inventory/a", adminToken, ""); r.status != 200 {
		t.Errorf("first call after /health UP = %d %s, want 200", r.status, r.body)
	}
}

// TestReloadMovesHealth: after a reload moves an upstream, /health checks
// the new instances.
func TestReloadMovesHealth(t *testing.T) {
	h := newHarness(t, setup{down: []string{"inventory"}})
	if r := h.do("GET", "/health", "", ""); r.status != 503 {
		t.Fatalf("/health with inventory down = %d %s, want 503", r.status, r.body)
	}
	i := slices.IndexFunc(h.cfg.Upstreams, func(u config.UpstreamConfig) bool { return u.Name == "inventory" })
	next := h.cfg
	next.Upstreams = slices.Clone(h.cfg.Upstreams)
	next.Upstreams[i].Addresses = []string{h.startUpstream(h.cfg.Upstreams[i], nil)}
	if _, err := h.srv.Reload(t.Context(), next, SourceAdmin); err != nil {
		t.Fatalf("Reload() = %v", err)
	}
	if r := h.do("GET", "/health", "", ""); r.status != 200 {
		t.Errorf("/health after moving inventory to a live instance = %d %s, want 200", r.status, r.body)
	}
}

// TestOpenAPIStatesPolicy: with auth.policy set, /openapi.json states per
// operation the roles that policy grants (x-portico-roles and the
// description), not the built-in ones, and is otherwise the generated
// document.
func TestOpenAPIStatesPolicy(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Auth.Tokens, c.Auth.SignedApps = nil, config.SignedAppsConfig{}
		c.Auth.APIKeys = []config.APIKeyConfig{{Key: "doc-key-0001", Subject: "acme", Roles: []string{"partner"}}}
		c.Auth.Policy = []config.PolicyRuleConfig{
			{Roles: []string{"partner"}, Allow: []string{"GET /api/inventory/**", "portico.order.v1.OrderService/CreateOrder"}},
			{Roles: []string{"auditor"}, Allow: []string{"GET /api/orders/**"}},
		}
	}})
	r := h.do("GET", "/openapi.json", "", "")
	type op struct {
		Description string   `json:"description"`
		Roles       []string `json:"x-portico-roles"`
	}
	var got, gen struct {
		Paths      map[string]map[string]op `json:"paths"`
		Components json.RawMessage          `json:"components"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatalf("/openapi.json = %d: %v", r.status, err)
	}
	if err := json.Unmarshal(genopenapi.JSON, &gen); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		method, path string
		want         []string
	}{
		{"post", "/api/orders", []string{"partner"}},
		{"get", "/api/orders/{id}", []string{"auditor"}},
		{"get", "/api/inventory/{sku}", []string{"partner"}},
		{"patch", "/api/inventory/{sku}", []string{}},
	} {
		o := got.Paths[tt.path][tt.method]
		who := strings.Join(tt.want, ", ")
		if who == "" {
			who = "no role"
		}
		if !slices.Equal(o.Roles, tt.want) || o.Roles == nil || !strings.HasSuffix(o.Description, "Roles (this deployment's `auth.policy`): "+who+".") {
			t.Errorf("%s %s: x-portico-roles %q, description ends %q; want %q", tt.method, tt.path, o.Roles, tail(o.Description, 60), tt.want)
		}
	}
	var a, b any
	_ = json.Unmarshal(got.Components, &a)
	_ = json.Unmarshal(gen.Components, &b)
	if len(got.Paths) != len(gen.Paths) || !reflect.DeepEqual(a, b) {
		t.Errorf("/openapi.json under a policy: %d paths (want %d), components equal %v", len(got.Paths), len(gen.Paths), reflect.DeepEqual(a, b))
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// TestAPIAnswersAreNotStored: every /api answer, data or problem, says
// Cache-Control: no-store (it holds a caller's private data and carried
// no Cache-Control); the public OpenAPI document may be stored, and is
// revalidated with its ETag (no-cache).
func TestAPIAnswersAreNotStored(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.getOrder = func(_ context.Context, r *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		return &orderv1.Order{Id: r.GetId()}, nil
	}
	tests := []struct {
		name, method, path, token, body string
		status                          int
		want                            string
	}{
		{"order", "GET", "/api/orders/ord-1", adminToken, "", 200, "no-store"},
		{"create", "POST", "/api/orders", aliceToken, `{"customerId":"alice","items":[{"sku":"a","quantity":1}]}`, 0, "no-store"},
		{"unauthenticated", "GET", "/api/orders/ord-1", "", "", 401, "no-store"},
		{"no such route", "GET", "/api/nothing", adminToken, "", 404, "no-store"},
		{"openapi", "GET", "/openapi.json", "", "", 200, "no-cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(tt.method, tt.path, tt.token, tt.body, "Idempotency-Key: k-"+tt.name)
			if tt.status != 0 && r.status != tt.status {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, r.status, r.body, tt.status)
			}
			if got := r.header.Get("Cache-Control"); got != tt.want {
				t.Errorf("%s %s (%d): Cache-Control = %q, want %q", tt.method, tt.path, r.status, got, tt.want)
			}
		})
	}
}

// TestProbeDownIsInfo: a readiness probe's or /health's 503 during an
// outage is an INFO access line like its 200, not an ERROR per probe; an
// API call the outage fails is still an ERROR.
func TestProbeDownIsInfo(t *testing.T) {
	h := newHarness(t, setup{down: []string{"inventory"}, cfg: func(c *config.Config) { c.Ops.ReadyRequires = []string{"inventory"} }})
	h.srv.serving.Store(true)
	waitState(t, h.srv.snap.Load().upstreams["inventory"].cc, connectivity.TransientFailure)
	for _, path := range []string{"/healthz/ready", "/health"} {
		if r := h.do("GET", path, "", ""); r.status != 503 {
			t.Fatalf("%s with inventory down = %d %s, want 503", path, r.status, r.body)
		}
	}
	if r := h.do("GET", "/api/inventory/a", readerToken, ""); r.status < 500 {
		t.Fatalf("GET /api/inventory/a with inventory down = %d, want a 5xx", r.status)
	}
	h.logs.WaitFor(t.Context(), 10*time.Second, func(string) bool { return len(h.logs.lines(t, "request")) >= 3 })
	levels := map[string]any{}
	for _, l := range h.logs.lines(t, "request") {
		levels[l["path"].(string)] = l["level"]
	}
	want := map[string]any{"/healthz/ready": "INFO", "/health": "INFO", "/api/inventory/a": "ERROR"}
	for path, level := range want {
		if levels[path] != level {
			t.Errorf("access line of %s at %v, want %s (all: %v)", path, levels[path], level, levels)
		}
	}
}
