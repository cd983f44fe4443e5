package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/route"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// withUpstream returns cfg with upstream name's addresses replaced.
func withUpstream(cfg config.Config, name string, addrs ...string) config.Config {
	cfg.Upstreams = slices.Clone(cfg.Upstreams)
	for i := range cfg.Upstreams {
		if cfg.Upstreams[i].Name == name {
			cfg.Upstreams[i].Addresses = addrs
		}
	}
	return cfg
}

// awaitShutdown waits, on connectivity events, until cc is closed.
func awaitShutdown(t *testing.T, cc *grpc.ClientConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for st := cc.GetState(); st != connectivity.Shutdown; st = cc.GetState() {
		if !cc.WaitForStateChange(ctx, st) {
			t.Fatalf("connection still %v, want SHUTDOWN", st)
		}
	}
}

// TestReloadAppliesEverything: tokens, timeouts and limits change on
// reload, not just addresses; an upstream whose settings did not change
// keeps its connection (and so its breaker and ejection state).
func TestReloadAppliesEverything(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	before := h.srv.snap.Load()
	if r := h.do("GET", "/api/orders/ord-1", "new-token", ""); r.status != 401 {
		t.Fatalf("unknown token before reload = %d, want 401", r.status)
	}
	next := h.cfg
	next.Auth.Tokens = append(slices.Clone(next.Auth.Tokens), config.TokenConfig{Token: "new-token", Subject: "carol", Role: "admin"})
	next.HTTP.MaxHeaderBytes = 600
	next.Upstreams = slices.Clone(next.Upstreams)
	next.Upstreams[0].Timeout = 2 * time.Second // inventory: a route setting, same connection
	res, err := h.srv.Reload(t.Context(), next, SourceAdmin)
	if err != nil {
		t.Fatalf("Reload() = %v", err)
	}
	if !res.Changed || res.Previous != before.version.ID || res.Version.ID == before.version.ID {
		t.Errorf("Reload() = %+v, want a new version after %s", res, before.version.ID)
	}
	if r := h.do("GET", "/api/orders/ord-1", "new-token", ""); r.status != 200 {
		t.Errorf("token added by reload = %d, want 200", r.status)
	}
	if r := h.do("GET", "/api/orders/ord-1", adminToken, "", "X-Pad: "+strings.Repeat("x", 600)); r.status != 431 {
		t.Errorf("headers over the reloaded limit = %d, want 431", r.status)
	}
	after := h.srv.snap.Load()
	for name, uc := range before.upstreams {
		if after.upstreams[name] != uc {
			t.Errorf("upstream %s got a new connection; its settings did not change", name)
		}
	}
	if got := after.endpoints[routeFor(t, after, "GET", "/api/inventory/x")].timeout; got != 2*time.Second {
		t.Errorf("inventory route timeout after reload = %v, want 2s", got)
	}
	wantDiff := []string{"+ auth.tokens[carol].role: admin", "+ auth.tokens[carol].subject: carol", "+ auth.tokens[carol].token: [REDACTED]",
		"~ http.max_header_bytes: 65536 -> 600", "~ upstreams[inventory].timeout: 5s -> 2s"}
	if !slices.Equal(res.Diff, wantDiff) {
		t.Errorf("Diff =\n%s\nwant\n%s", strings.Join(res.Diff, "\n"), strings.Join(wantDiff, "\n"))
	}
}

func routeFor(t *testing.T, sn *snapshot, method, path string) *route.Route {
	t.Helper()
	rt, _ := sn.table.Match(method, path)
	if rt == nil {
		t.Fatalf("no route for %s %s", method, path)
	}
	return rt
}

// TestReloadRemovesUpstreamInFlight: a reload that replaces an upstream's
// instances while a request to it is in flight lets that request finish
// on the old connection, sends new requests to the new instances, and
// closes the old connection once the last request using it is done.
func TestReloadRemovesUpstreamInFlight(t *testing.T) {
	h := newHarness(t, setup{})
	called, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.order.getOrder = func(ctx context.Context, r *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		if r.GetId() == "slow" {
			once.Do(func() { close(called) })
			<-release
		}
		return &orderv1.Order{Id: r.GetId()}, nil
	}
	old := h.srv.snap.Load().upstreams["order"]
	inflight := make(chan response, 1)
	go func() { inflight <- h.do("GET", "/api/orders/slow", adminToken, "") }()
	await(t, called, "the slow call never reached the upstream")

	moved := h.startUpstream(h.cfg.Upstreams[2], nil)
	if _, err := h.srv.Reload(t.Context(), withUpstream(h.cfg, "order", moved), SourceAdmin); err != nil {
		t.Fatalf("Reload() = %v", err)
	}
	if now := h.srv.snap.Load().upstreams["order"]; now == old {
		t.Fatal("order kept its connection though its instances changed")
	}
	if r := h.do("GET", "/api/orders/fast", adminToken, ""); r.status != 200 {
		t.Errorf("request after the reload = %d %s, want 200", r.status, r.body)
	}
	if st := old.cc.GetState(); st == connectivity.Shutdown {
		t.Fatal("the old connection closed while a request was still using it")
	}
	close(release)
	if r := <-inflight; r.status != 200 {
		t.Errorf("in-flight request across the reload = %d %s, want 200", r.status, r.body)
	}
	awaitShutdown(t, old.cc)
}

// TestReloadUnderLoad: workers call the edge without pause while the config
// flips between two upstream instance sets and two timeouts; no request
// fails because of a reload, and every retired connection closes.
func TestReloadUnderLoad(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	a := h.cfg
	b := withUpstream(a, "order", h.startUpstream(a.Upstreams[2], nil))
	b.Routes.MaxBodyBytes = 4096
	const workers, perWorker, reloads = 3, 60, 20
	var failed atomic.Int32
	var firstErr atomic.Value
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				select {
				case <-stop:
					return
				default:
				}
				r := h.do("GET", fmt.Sprintf("/api/orders/o-%d-%d", w, i), adminToken, "")
				if r.status != 200 {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%d %s", r.status, r.body))
				}
			}
		})
	}
	var conns []*grpc.ClientConn
	for i := range reloads {
		next := a
		if i%2 == 0 {
			next = b
		}
		conns = append(conns, h.srv.snap.Load().upstreams["order"].cc)
		if _, err := h.srv.Reload(t.Context(), next, SourceSignal); err != nil {
			t.Fatalf("Reload %d = %v", i, err)
		}
	}
	wg.Wait()
	close(stop)
	if n := failed.Load(); n > 0 {
		t.Errorf("%d requests failed during reloads; first: %v", n, firstErr.Load())
	}
	live := h.srv.snap.Load().upstreams["order"].cc
	for _, cc := range conns {
		if cc != live {
			awaitShutdown(t, cc)
		}
	}
}

// TestReloadStorm: many concurrent reloads (as from a burst of SIGHUPs)
// serialize; the live version is one of the configs, the same content is
// no new version, and nothing leaks (goleak in TestMain).
func TestReloadStorm(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	a := h.cfg
	b := a
	b.Routes.MaxBodyBytes = 4096
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			next := a
			if i%2 == 0 {
				next = b
			}
			if _, err := h.srv.Reload(context.Background(), next, SourceSignal); err != nil {
				t.Errorf("Reload = %v", err)
			}
		})
	}
	wg.Wait()
	live := h.srv.snap.Load().version.ID
	if live != versionOf(a.WithDefaults()).ID && live != versionOf(b.WithDefaults()).ID {
		t.Errorf("live version %s is neither config", live)
	}
	if got := len(h.srv.Versions()); got != 2 {
		t.Errorf("kept versions = %d, want 2 (two distinct contents)", got)
	}
	if r := h.do("GET", "/api/orders/o", adminToken, ""); r.status != 200 {
		t.Errorf("after the storm = %d", r.status)
	}
}

// TestReloadRejects: an invalid config, a file that does not parse and a
// torn (half-written) file are each rejected: the running config stays,
// the rejection is counted and audited with its reason.
func TestReloadRejects(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	h.srv.o.configPath = path
	good, err := yaml.Marshal(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	live := h.srv.snap.Load().version.ID
	tests := []struct {
		name    string
		file    []byte // written, then ReloadFile
		cfg     *config.Config
		wantErr string
	}{
		{name: "invalid config", cfg: func() *config.Config { c := withUpstream(h.cfg, "order"); return &c }(),
			wantErr: "upstreams[2].addresses: at least one address is required"},
		{name: "not YAML", file: []byte("listen: [\n"), wantErr: "gateway config: malformed YAML"},
		{name: "unknown key", file: []byte("listn: x\n"), wantErr: "listn: unknown field"},
		// Torn inside a top-level key: a cut at a fixed fraction could land
		// on a line boundary that parses (it did once the config grew).
		{name: "torn file", file: good[:bytes.Index(good, []byte("\nupstreams:"))+len("\nupstr")], wantErr: "gateway config"},
		{name: "missing file", wantErr: "no such file"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			switch {
			case tt.cfg != nil:
				_, err = h.srv.Reload(t.Context(), *tt.cfg, SourceAdmin)
			default:
				_ = os.Remove(path)
				if tt.file != nil {
					if werr := os.WriteFile(path, tt.file, 0o600); werr != nil {
						t.Fatal(werr)
					}
				}
				_, err = h.srv.ReloadFile(t.Context(), SourceFile)
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("reload = %v, want an error containing %q", err, tt.wantErr)
			}
			if got := h.srv.snap.Load().version.ID; got != live {
				t.Errorf("live version = %s, want %s still", got, live)
			}
			if got := testutil.ToFloat64(h.srv.reloads.reloads.WithLabelValues("rejected")); got != float64(i+1) {
				t.Errorf("rejected reloads = %v, want %d", got, i+1)
			}
			if a := h.srv.Audit()[0]; a.Event != "rejected" || a.Previous != live || !strings.Contains(a.Error, tt.wantErr) {
				t.Errorf("audit = %+v, want rejected with the reason", a)
			}
		})
	}
	if r := h.do("GET", "/api/orders/o", adminToken, ""); r.status != 200 {
		t.Errorf("after rejected reloads = %d", r.status)
	}
	if n := len(h.logs.lines(t, "reload rejected; keeping the running config")); n != len(tests) {
		t.Errorf("rejections logged = %d, want %d", n, len(tests))
	}
}

// TestRollback: rollback with no version goes to the previous one, with a
// kept version to that one, with an unknown one fails; kept versions are
// bounded by ops.keep_versions.
func TestRollback(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	cfgs := []config.Config{h.cfg}
	for i := 1; i <= 3; i++ {
		c := h.cfg
		c.Routes.MaxBodyBytes = int64(1000 * i)
		c.Ops.KeepVersions = 3
		cfgs = append(cfgs, c)
		if _, err := h.srv.Reload(t.Context(), c, SourceAdmin); err != nil {
			t.Fatal(err)
		}
	}
	id := func(c config.Config) string { return versionOf(c.WithDefaults()).ID }
	if vs := h.srv.Versions(); len(vs) != 3 || vs[0].ID != id(cfgs[3]) || vs[2].ID != id(cfgs[1]) {
		t.Fatalf("Versions() = %+v, want the last 3, newest first", vs)
	}
	res, err := h.srv.Rollback(t.Context(), "")
	if err != nil || res.Version.ID != id(cfgs[2]) || res.Version.Source != SourceRollback {
		t.Fatalf("Rollback(previous) = %+v, %v; want version %s", res, err, id(cfgs[2]))
	}
	if got := h.srv.Config().Routes.MaxBodyBytes; got != 2000 {
		t.Errorf("max_body_bytes after rollback = %d, want 2000", got)
	}
	if res, err = h.srv.Rollback(t.Context(), id(cfgs[1])); err != nil || res.Version.ID != id(cfgs[1]) {
		t.Errorf("Rollback(%s) = %+v, %v", id(cfgs[1]), res, err)
	}
	if _, err := h.srv.Rollback(t.Context(), id(cfgs[0])); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("Rollback(a version no longer kept) = %v, want ErrUnknownVersion", err)
	}
	if a := h.srv.Audit()[0]; a.Event != "applied" || a.Source != SourceRollback || a.Version != id(cfgs[1]) {
		t.Errorf("audit after rollback = %+v", a)
	}
	if r := h.do("GET", "/api/orders/o", adminToken, ""); r.status != 200 {
		t.Errorf("after rollbacks = %d", r.status)
	}
}
