package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/interceptors"
)

// adminHarness is an edge built WithUpstreams (the real chains), with its
// admin API on a test server and its config in a file.
type adminHarness struct {
	*harness
	srv   *Server
	admin *httptest.Server
	api   *httptest.Server // srv's API
	path  string
}

// newAdminHarness builds it; each before runs on the harness first (to
// change h.cfg, start more upstream servers).
func newAdminHarness(t *testing.T, before ...func(*harness)) *adminHarness {
	h := newHarness(t, setup{})
	okStubs(h)
	for _, f := range before {
		f(h)
	}
	ups := NewUpstreams(interceptors.WithLogger(discardLogger()))
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	writeConfig(t, path, h.cfg)
	srv, err := New(context.Background(), h.cfg, WithUpstreams(ups), WithConfigFile(path), WithLogger(discardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	admin, api := httptest.NewServer(srv.AdminHandler()), httptest.NewServer(srv.Handler())
	t.Cleanup(func() { api.Close(); admin.Close(); srv.Close(); ups.Close() })
	return &adminHarness{harness: h, srv: srv, admin: admin, api: api, path: path}
}

func writeConfig(t *testing.T, path string, c config.Config) {
	t.Helper()
	b, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (a *adminHarness) call(t *testing.T, method, path, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, a.admin.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := a.admin.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAdminAccess: /metrics and /healthz/* are open, everything else needs
// the admin role; unknown paths and methods are problems.
func TestAdminAccess(t *testing.T) {
	a := newAdminHarness(t)
	tests := []struct {
		method, path, token string
		want                int
	}{
		{"GET", "/healthz/live", "", 200},
		{"GET", "/healthz/ready", "", 503}, // not serving on the API listener yet
		{"GET", "/metrics", "", 200},
		{"GET", "/admin/openapi.json", "", 200},
		{"GET", "/admin/config", "", 401},
		{"GET", "/admin/config", "wrong", 401},
		{"GET", "/admin/config", readerToken, 403},
		{"GET", "/admin/config", adminToken, 200},
		{"GET", "/admin/versions", adminToken, 200},
		{"GET", "/admin/audit", adminToken, 200},
		{"GET", "/admin/routes", adminToken, 200},
		{"GET", "/admin/upstreams", adminToken, 200},
		{"GET", "/admin/limits", "", 401},
		{"GET", "/admin/limits", readerToken, 403},
		{"GET", "/admin/limits", adminToken, 200},
		{"POST", "/admin/reload", readerToken, 403},
		{"GET", "/admin/reload", adminToken, 405},
		{"POST", "/admin/config", adminToken, 405},
		{"GET", "/admin/nope", adminToken, 404},
		{"GET", "/api/orders/x", adminToken, 404}, // the API is not on the admin listener
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.token, func(t *testing.T) {
			if got, body := a.call(t, tt.method, tt.path, tt.token); got != tt.want {
				t.Errorf("%s %s = %d %s, want %d", tt.method, tt.path, got, body, tt.want)
			}
		})
	}
}

// TestAdminShowsLiveState: the live config is redacted, routes carry their
// upstream, timeout, limits and roles, and upstreams their chain state.
func TestAdminShowsLiveState(t *testing.T) {
	a := newAdminHarness(t)
	_, body := a.call(t, "GET", "/admin/config", adminToken)
	for _, tok := range []string{adminToken, readerToken, aliceToken, bobToken} {
		if strings.Contains(body, tok) {
			t.Errorf("/admin/config shows token %s", tok)
		}
	}
	if !strings.Contains(body, `"token":"[REDACTED]"`) || !strings.Contains(body, `"id":"`+a.srv.snap.Load().version.ID) {
		t.Errorf("/admin/config = %s, want redacted tokens and the live version", body)
	}
	_, body = a.call(t, "GET", "/admin/routes", adminToken)
	var routes struct{ Routes []RouteInfo }
	if err := json.Unmarshal([]byte(body), &routes); err != nil || len(routes.Routes) != 18 {
		t.Fatalf("/admin/routes = %s (%v), want 18 routes", body, err)
	}
	want := RouteInfo{Method: "POST", Path: "/api/orders", RPC: "/portico.order.v1.OrderService/CreateOrder", Upstream: "order",
		Timeout: "5s", MaxTimeout: "30s", MaxBodyBytes: 1 << 20, Roles: []string{"admin", "customer"}, IdempotencyKey: true}
	found := false
	for _, r := range routes.Routes {
		if r.Method == want.Method && r.Path == want.Path {
			found = true
			if got, _ := json.Marshal(r); string(got) != string(must(json.Marshal(want))) {
				t.Errorf("POST /api/orders = %s, want %s", got, must(json.Marshal(want)))
			}
		}
	}
	if !found {
		t.Error("/admin/routes lacks POST /api/orders")
	}
	_, body = a.call(t, "GET", "/admin/upstreams", adminToken)
	var ups struct{ Upstreams []UpstreamInfo }
	if err := json.Unmarshal([]byte(body), &ups); err != nil || len(ups.Upstreams) != 3 {
		t.Fatalf("/admin/upstreams = %s (%v)", body, err)
	}
	for _, u := range ups.Upstreams {
		if u.Health != "UP" || u.Chain == nil || len(u.Chain.Instances) != 1 || len(u.Chain.Breakers) != 1 || u.Chain.Breakers[0].State != "closed" {
			t.Errorf("upstream %s = %+v, want UP with one instance and a closed breaker", u.Name, u)
		}
	}
}

// TestWatchDoesNotUndoRollback: a file change that a reload has read
// already (SIGHUP, POST /admin/reload) and the watch reports after a
// rollback is no change: the rollback stays; a later edit applies.
func TestWatchDoesNotUndoRollback(t *testing.T) {
	a := newAdminHarness(t)
	first := a.srv.snap.Load().version.ID
	next := a.cfg
	next.Routes.MaxBodyBytes = 2048
	writeConfig(t, a.path, next)
	if code, body := a.call(t, "POST", "/admin/reload", adminToken); code != 200 {
		t.Fatalf("POST /admin/reload = %d %s", code, body)
	}
	if code, body := a.call(t, "POST", "/admin/rollback", adminToken); code != 200 {
		t.Fatalf("POST /admin/rollback = %d %s", code, body)
	}
	res, err := a.srv.ReloadFile(t.Context(), SourceFile) // the watch's late report
	if err != nil || res.Changed || a.srv.snap.Load().version.ID != first {
		t.Errorf("watch after the rollback = %+v, %v; live %s, want %s kept", res, err, a.srv.snap.Load().version.ID, first)
	}
	next.Routes.MaxBodyBytes = 4096
	writeConfig(t, a.path, next)
	if res, err := a.srv.ReloadFile(t.Context(), SourceFile); err != nil || !res.Changed {
		t.Errorf("watch of a new edit = %+v, %v, want it applied", res, err)
	}
}

// TestAdminReloadAndRollback: POST /admin/reload applies the changed file,
// rejects a broken one (409, config stays) and POST /admin/rollback goes
// back; an unknown version is 404.
func TestAdminReloadAndRollback(t *testing.T) {
	a := newAdminHarness(t)
	first := a.srv.snap.Load().version.ID
	next := a.cfg
	next.Routes.MaxBodyBytes = 2048
	writeConfig(t, a.path, next)
	code, body := a.call(t, "POST", "/admin/reload", adminToken)
	var res ReloadResult
	if err := json.Unmarshal([]byte(body), &res); code != 200 || err != nil || !res.Changed || res.Previous != first {
		t.Fatalf("POST /admin/reload = %d %s", code, body)
	}
	if err := os.WriteFile(a.path, []byte("upstreams: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := a.call(t, "POST", "/admin/reload", adminToken); code != 409 || !strings.Contains(body, "FAILED_PRECONDITION") {
		t.Errorf("reload of a broken file = %d %s, want 409", code, body)
	}
	if got := a.srv.Config().Routes.MaxBodyBytes; got != 2048 {
		t.Errorf("after a rejected reload max_body_bytes = %d, want 2048 still", got)
	}
	if code, body := a.call(t, "POST", "/admin/rollback", adminToken); code != 200 || !strings.Contains(body, `"id":"`+first) {
		t.Errorf("POST /admin/rollback = %d %s, want version %s", code, body, first)
	}
	if code, _ := a.call(t, "POST", "/admin/rollback?version=000000000000", adminToken); code != 404 {
		t.Errorf("rollback to an unknown version = %d, want 404", code)
	}
	_, body = a.call(t, "GET", "/admin/audit", adminToken)
	var audit struct{ Audit []AuditEntry }
	if err := json.Unmarshal([]byte(body), &audit); err != nil || len(audit.Audit) != 3 {
		t.Fatalf("/admin/audit = %s, want 3 records", body)
	}
	if e := audit.Audit[0]; e.Event != "applied" || e.Source != SourceRollback || e.Version != first {
		t.Errorf("newest audit record = %+v, want the rollback to %s", e, first)
	}
	if e := audit.Audit[1]; e.Event != "rejected" || e.Source != SourceAdmin || e.Error == "" {
		t.Errorf("second audit record = %+v, want the rejected reload with its reason", e)
	}
}

// TestAdminOpenAPI: the fragment is JSON and documents every admin path
// the handler serves, and nothing else.
func TestAdminOpenAPI(t *testing.T) {
	var doc struct{ Paths map[string]map[string]any }
	if err := json.Unmarshal(adminOpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	s.ops = map[string]http.HandlerFunc{"/metrics": nil}
	routes := s.adminRoutes()
	for path, rt := range routes {
		for _, m := range strings.Fields(rt.method) {
			if _, ok := doc.Paths[path][strings.ToLower(m)]; !ok {
				t.Errorf("admin_openapi.json lacks %s %s", m, path)
			}
		}
	}
	for path := range doc.Paths {
		if _, ok := routes[path]; !ok {
			t.Errorf("admin_openapi.json documents %s, which is not served", path)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestAdminRollbackVersionParam: an empty or repeated ?version= is a 400
// problem that changes nothing; only an absent parameter means the
// previous version.
func TestAdminRollbackVersionParam(t *testing.T) {
	a := newAdminHarness(t)
	first := a.srv.snap.Load().version.ID
	next := a.cfg
	next.Routes.MaxBodyBytes = 2048
	if _, err := a.srv.Reload(t.Context(), next, SourceAdmin); err != nil {
		t.Fatal(err)
	}
	second := a.srv.snap.Load().version.ID
	for _, q := range []string{"?version=", "?version", "?version=&version=" + first, "?version=" + first + "&version=" + first} {
		t.Run(q, func(t *testing.T) {
			code, body := a.call(t, "POST", "/admin/rollback"+q, adminToken)
			if code != 400 || !strings.Contains(body, "INVALID_ARGUMENT") {
				t.Errorf("POST /admin/rollback%s = %d %s, want a 400 problem", q, code, body)
			}
			if live := a.srv.snap.Load().version.ID; live != second {
				t.Errorf("live version after a refused rollback = %s, want %s still", live, second)
			}
		})
	}
	if code, body := a.call(t, "POST", "/admin/rollback", adminToken); code != 200 || !strings.Contains(body, `"id":"`+first) {
		t.Errorf("POST /admin/rollback (no version) = %d %s, want version %s", code, body, first)
	}
}

// TestAdminFailedAuthLimit: failed sign-ins on the admin listener count
// against limits.failed_auth per client address, as on the API listener:
// once it is used up they get a 429 problem with Retry-After, and a good
// token is not counted.
func TestAdminFailedAuthLimit(t *testing.T) {
	const rate = 5
	a := newAdminHarness(t, func(h *harness) {
		h.cfg.Limits = config.LimitsConfig{FailedAuth: &config.LimitConfig{Rate: rate, Period: time.Minute}}
	})
	for range 3 {
		if code, body := a.call(t, "GET", "/admin/versions", adminToken); code != 200 {
			t.Fatalf("good token = %d %s, want 200", code, body)
		}
	}
	var codes []int
	for range rate + 3 {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", a.admin.URL+"/admin/versions", nil)
		req.Header.Set("Authorization", "Bearer wrong")
		resp, err := a.admin.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == 429 && (resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "RATE_LIMIT_EXCEEDED") ||
			resp.Header.Get("Content-Type") != "application/problem+json") {
			t.Errorf("429 = %v %s, want a RATE_LIMIT_EXCEEDED problem with Retry-After", resp.Header, b)
		}
	}
	want := []int{401, 401, 401, 401, 401, 429, 429, 429}
	if !slices.Equal(codes, want) {
		t.Errorf("bad tokens got %v, want %v", codes, want)
	}
}

// TestAdminRoutesOnce: each admin path is claimed by one feature only, so
// joining them (adminRoutes) never drops one.
func TestAdminRoutesOnce(t *testing.T) {
	s := &Server{}
	owner := map[string]int{}
	for i, feature := range adminFeatures {
		for path := range feature(s) {
			if j, dup := owner[path]; dup {
				t.Errorf("%s is claimed by adminFeatures[%d] and [%d]", path, j, i)
			}
			owner[path] = i
		}
	}
	if len(owner) < 12 {
		t.Errorf("%d admin paths, want at least the 12 of the README", len(owner))
	}
}
