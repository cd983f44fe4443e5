package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/interceptors"
)

// TestExampleConfig loads the configuration reference users copy.
func TestExampleConfig(t *testing.T) {
	c, err := config.Load(filepath.Join("..", "deploy", "portico.example.yaml"), CheckRoutes)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Upstreams[2].Resilience; r.Breaker.ConsecutiveFailures != 2 || r.Breaker.CoolDown != 800*time.Millisecond {
		t.Errorf("order's resilience = %+v, want breaker 2 failures / 800ms", r)
	}
	if d := cmp.Diff(interceptors.Config{}, c.Upstreams[0].Resilience); d != "" {
		t.Errorf("inventory has no resilience block, got (-want +got):\n%s", d)
	}
	// The example must also build a server: override keys select routes.
	h := newHarness(t, setup{cfg: func(cfg *config.Config) { *cfg = c }})
	if r := h.do("GET", "/healthz/live", "", ""); r.status != 200 {
		t.Errorf("live = %d", r.status)
	}
}

// TestConfigErrors compares the error of every bad config in testdata with
// its golden file: each problem named by its field path.
func TestConfigErrors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "config", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = config.Parse(data, CheckRoutes)
			if err == nil {
				t.Fatalf("config.Parse(%s) = nil, want an error", f)
			}
			golden(t, "config/"+name+".err", []byte(err.Error()+"\n"))
		})
	}
}

// TestNewRejects covers what only New can check: the config against the
// registration list and route table.
func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(*config.Config)
		want string
	}{
		{"override selects no route", func(c *config.Config) {
			c.Routes.Overrides = map[string]config.RouteOverride{"GET /api/nothing": {Timeout: time.Second}}
		}, `routes.overrides["GET /api/nothing"]: selects no route`},
		{"two overrides select one route", func(c *config.Config) {
			c.Routes.Overrides = map[string]config.RouteOverride{"/api/orders": {Timeout: time.Second}, "POST /api/orders": {Timeout: time.Second}}
		}, "both select POST /api/orders"},
		{"override timeout over max", func(c *config.Config) {
			c.Routes.Overrides = map[string]config.RouteOverride{"portico.order.v1.OrderService.GetOrder": {Timeout: time.Minute}}
		}, "timeout 1m0s exceeds max_timeout 30s"},
		{"upstream timeout over max", func(c *config.Config) { c.Upstreams[0].Timeout = time.Hour }, "exceeds routes.max_timeout"},
		{"unused upstream", func(c *config.Config) {
			c.Upstreams = append(c.Upstreams, config.UpstreamConfig{Name: "extra", Addresses: []string{"a:1"}})
		}, `"extra" serves no registered service`},
		{"invalid config", func(c *config.Config) { c.Upstreams[0].Name = "" }, "upstreams[0].name"},
		{"policy selector selects no route", func(c *config.Config) {
			c.Auth.Policy = []config.PolicyRuleConfig{{Roles: []string{"admin", "customer"}, Allow: []string{"*"}},
				{Roles: []string{"reader"}, Allow: []string{"GET *", "GET /api/nothing"}}}
		}, "gateway config: auth.policy[1].allow[1]: \"GET /api/nothing\": selects no route"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Dev(43100)
			tt.cfg(&c)
			srv, err := New(context.Background(), c, WithLogger(discardLogger()))
			if err == nil {
				srv.Close()
				t.Fatalf("New() = nil error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New() = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// TestProblemTypeBase: with problems.type_base set every problem's type is
// absolute under it (raised by the edge, by auth, for an unreachable
// upstream, on the admin listener), so a client behind a path-prefix
// ingress can follow it; without the section it stays /problems/<slug>.
func TestProblemTypeBase(t *testing.T) {
	const base = "https://api.example.com/shop/problems/"
	answered := []struct{ name, method, path, token, code string }{
		{"404 no route", "GET", "/api/nope", adminToken, problem.CodeRouteNotFound},
		{"401 no token", "GET", "/api/orders/ord-1", "", problem.CodeUnauthenticated},
		{"405 method", "DELETE", "/api/orders", adminToken, problem.CodeMethodNotAllowed},
		{"502 upstream down", "GET", "/api/orders/ord-1", aliceToken, problem.CodeUpstreamUnavailable},
		{"404 unknown page", "GET", "/problems/nope", "", problem.CodeNotFound},
	}
	for _, tt := range []struct{ name, base, want string }{
		{"absolute", base, base},
		{"default", "", problem.TypeBase},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{down: allDown.down, cfg: func(c *config.Config) { c.Problems.TypeBase = tt.base }})
			for _, a := range answered {
				r := h.do(a.method, a.path, a.token, "")
				body := r.json(t)
				if want := tt.want + problem.Slug(a.code); body["code"] != a.code || body["type"] != want {
					t.Errorf("%s: %d code %v type %v, want %s and %s", a.name, r.status, body["code"], body["type"], a.code, want)
				}
			}
		})
	}
	t.Run("admin", func(t *testing.T) {
		a := newAdminHarness(t, func(h *harness) { h.cfg.Problems.TypeBase = base })
		_, body := a.call(t, "GET", "/admin/nope", adminToken)
		if want := `"type":"` + base + "route-not-found" + `"`; !strings.Contains(body, want) {
			t.Errorf("GET /admin/nope = %s, want %s", body, want)
		}
	})
}

// TestNewChecksLikeCheckConfig: a Config built in Go gets the checks a
// file gets (config.Config.Check): New refuses a mistake only the
// semantic checks catch, a cloud metadata upstream, with the message
// check-config gives for the same document (less the file's name).
func TestNewChecksLikeCheckConfig(t *testing.T) {
	c := config.Dev(0)
	c.Upstreams[0].Addresses = []string{"169.254.169.254:80"}
	b, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, fileErr := config.Load(path, CheckRoutes)
	srv, err := New(context.Background(), c, WithLogger(discardLogger()))
	if err == nil {
		srv.Close()
		t.Fatal("New(a metadata upstream) = nil error")
	}
	const want = `gateway config: upstreams[0].addresses[0]: "169.254.169.254:80" is a cloud metadata endpoint`
	if err.Error() != want {
		t.Errorf("New() = %v, want %s", err, want)
	}
	if fileErr == nil || fileErr.Error() != path+": "+err.Error() {
		t.Errorf("config.Load = %v, want %s: %v", fileErr, path, err)
	}
}
