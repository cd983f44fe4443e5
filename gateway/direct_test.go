package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/route"
)

// upstreamLog records the calls the edge sends its upstreams (a client
// interceptor): method and message, for comparing what two edges sent.
type upstreamLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *upstreamLog) interceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	b, _ := protojson.MarshalOptions{UseProtoNames: true}.Marshal(req.(proto.Message))
	l.mu.Lock()
	l.calls = append(l.calls, method+" "+string(b))
	l.mu.Unlock()
	return invoke(ctx, method, req, reply, cc, opts...)
}

func (l *upstreamLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.calls
	l.calls = nil
	return out
}

// recordingHarness is a harness with echoStubs whose upstream calls are
// logged.
func recordingHarness(t *testing.T, cfg func(*config.Config)) (*harness, *upstreamLog) {
	log := &upstreamLog{}
	chain := map[string]grpc.UnaryClientInterceptor{"rogue": log.interceptor}
	for _, up := range config.Dev(0).Upstreams {
		chain[up.Name] = log.interceptor
	}
	h := newHarness(t, setup{cfg: cfg, chain: chain})
	echoStubs(h)
	return h, log
}

// rogueRules are the bindings of a loaded service beside the dev
// config's routes: deep wildcards, a multi-segment variable, verbs and a
// custom method.
var rogueRules = []string{
	"/api/rogue/{name}", "/api/rogue/{name}:watch", "/api/rogue/files/{path=**}",
	"/api/rogue/{id}/books/{name=shelves/*}", "/api/rogue/{id}/all/{path=**}:get", "POST /api/rogue/{name}:run",
}

// directSpellings are the values a path variable takes in
// TestDirectCallEquivalence: plain, escaped (a slash, an escaped
// percent, a space, unicode, an unreserved byte), verbs and colons, the
// stubs' error cases and an empty component.
var directSpellings = []string{
	"kb-1", "%6Bb-1", "a%2Fb", "a%2fb", "a%252Fb", "a%20b", "%C3%A9t%C3%A9", "é", "a+b", "a;b=c",
	"a:b", "x:watch", "x:cancel", ":cancel", "x:commit:commit", "missing", "bad", "down", "", "a/b",
}

// directPaths are the spellings of rt's path: each variable set to every
// directSpellings value, then with a trailing slash, a doubled slash and
// a verb suffix.
func directPaths(rt *route.Route) []string {
	var out []string
	for _, v := range directSpellings {
		p := strings.ReplaceAll(probePath(rt.Pattern), "/~", "/"+v)
		out = append(out, p, p+"/", p+":x")
	}
	return append(out, strings.Replace(rt.Pattern, "/api/", "/api//", 1), probePath(rt.Pattern)+"%2F")
}

// TestDirectCallEquivalence: for every route of the dev config, on the
// generated handlers and on the descriptor path (with a loaded service of
// rogueRules there), and many spellings of each route's path (HEAD too
// for GET), a direct call and the mux give the same answer (status,
// headers but Date and trace ids, body) and send the upstream the same
// request.
func TestDirectCallEquivalence(t *testing.T) {
	for _, mode := range []string{"generated", "descriptors"} {
		t.Run(mode, func(t *testing.T) {
			cfg := func(c *config.Config) {}
			if mode == "descriptors" {
				rogue := withRogue(rogueSet(t, rogueRules...))
				cfg = func(c *config.Config) {
					toDescriptors(t, c, false)
					rogue(c)
				}
			}
			direct, dlog := recordingHarness(t, cfg)
			viaMux, mlog := recordingHarness(t, cfg)
			viaMux.srv.snap.Load().direct = nil // every request through the mux, as before
			sn := direct.srv.snap.Load()
			var called atomic.Int64
			for _, dc := range sn.direct {
				h := dc.h
				dc.h = func(w http.ResponseWriter, r *http.Request, p map[string]string) {
					called.Add(1)
					h(w, r, p)
				}
			}
			var requests, sent int
			classes := map[int]int{}
			for _, rt := range sn.table.Routes() {
				if sn.endpoints[rt].Stream {
					continue // served by serveStream, not grpc-gateway's handler
				}
				if sn.direct[rt] == nil {
					t.Errorf("%s is not called directly", rt.Key())
				}
				methods := []string{rt.Method}
				if rt.Method == http.MethodGet {
					methods = append(methods, http.MethodHead)
				}
				body := ""
				if rt.Body != "" {
					body = `{"name":"n","lines":[{"sku":"a","quantity":1}]}`
				}
				for _, method := range methods {
					for _, path := range directPaths(rt) {
						requests++
						hdr := []string{"Idempotency-Key: k-1"}
						a := direct.do(method, path, adminToken, body, hdr...)
						b := viaMux.do(method, path, adminToken, body, hdr...)
						classes[a.status/100]++
						if d := equivDiff(a, b); d != "" {
							t.Errorf("%s %s: direct call and mux differ: %s", method, path, d)
						}
						ua, ub := dlog.take(), mlog.take()
						if len(ua) > 0 {
							sent++
						}
						if !slices.Equal(ua, ub) {
							t.Errorf("%s %s: upstream got %q directly, %q through the mux", method, path, ua, ub)
						}
					}
				}
			}
			if n := called.Load(); n < int64(requests)/3 {
				t.Errorf("%d of %d requests were called directly: the direct path is not under test", n, requests)
			}
			if sent < requests/5 {
				t.Errorf("%d of %d requests reached an upstream: the upstream requests are not under test", sent, requests)
			}
			if classes[2] < 50 || classes[4] < 50 {
				t.Errorf("answers by class = %v: the spellings lost their good or their refused requests", classes)
			}
			t.Logf("%d requests, %d called directly, %d sent upstream, answers by class %v", requests, called.Load(), sent, classes)
		})
	}
}

// TestDirectCallReload: a reload builds a new mux and captures its
// handlers again: every route of the new table is called directly, by
// the new snapshot's handlers (the moved upstream receives the call).
func TestDirectCallReload(t *testing.T) {
	h := newHarness(t, setup{})
	echoStubs(h)
	before := h.srv.snap.Load()
	var moved atomic.Int64
	addr := h.startUpstream(h.cfg.Upstreams[2], func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		moved.Add(1)
		return handler(ctx, req)
	})
	if _, err := h.srv.Reload(t.Context(), withUpstream(h.cfg, "order", addr), SourceAdmin); err != nil {
		t.Fatalf("Reload() = %v", err)
	}
	after := h.srv.snap.Load()
	if after == before {
		t.Fatal("the reload kept the snapshot")
	}
	for _, rt := range after.table.Routes() {
		dc := after.direct[rt]
		if dc == nil {
			t.Fatalf("%s is not called directly after the reload", rt.Key())
		}
		for _, old := range before.direct {
			if old == dc {
				t.Fatalf("%s kept the old snapshot's handler", rt.Key())
			}
		}
	}
	if r := h.do("GET", "/api/orders/ord-1", adminToken, ""); r.status != http.StatusOK {
		t.Fatalf("GET after the reload = %d %s", r.status, r.body)
	}
	if moved.Load() != 1 {
		t.Errorf("the moved upstream received %d calls, want 1: the call went through the old snapshot's handler", moved.Load())
	}
}

// directMux is a mux with a capture of routes registered in order (as
// transcode does), each handler writing its pattern and parameters.
func directMux(t testing.TB, templates ...string) (*runtime.ServeMux, *muxCapture, []*route.Route) {
	t.Helper()
	c := &muxCapture{}
	mux := runtime.NewServeMux(runtime.WithMiddlewares(c.middleware), runtime.WithUnescapingMode(muxUnescaping),
		runtime.WithDisablePathLengthFallback(), runtime.WithDisableHTTPMethodOverride())
	var routes []*route.Route
	for _, tpl := range templates {
		method, pattern, _ := strings.Cut(tpl, " ")
		rt := &route.Route{Method: method, Pattern: pattern}
		if err := mux.HandlePath(method, pattern, func(w http.ResponseWriter, _ *http.Request, p map[string]string) {
			_, _ = w.Write([]byte(pattern + " " + p["id"]))
		}); err != nil {
			t.Fatal(err)
		}
		routes = append(routes, rt)
	}
	return mux, c, routes
}

// TestDirectCallFallsBack: a route is left to the mux when the mux would
// answer otherwise (a pattern it tries first matches, a malformed path),
// and every route is when the mux holds a handler no route claims.
func TestDirectCallFallsBack(t *testing.T) {
	mux, c, routes := directMux(t, "GET /api/a/{id}", "GET /api/a/{id}:do", "GET /api/b/{id=**}", "GET /api/b/x")
	d := captureDirect(t.Context(), mux, c, routes)
	if d == nil {
		t.Fatal("no route captured")
	}
	for _, tt := range []struct {
		route  int
		path   string
		direct bool
		want   string
	}{
		{0, "/api/a/k", true, "/api/a/{id} k"},
		{0, "/api/a/k:do", false, "/api/a/{id}:do k"}, // GetA's table match, but :do is tried first
		{0, "/api/a/:do", true, "/api/a/{id} :do"},    // a bare verb is no match for :do
		{1, "/api/a/k:do", true, "/api/a/{id}:do k"},  // the verb split off
		{2, "/api/b/p/q", true, "/api/b/{id=**} p/q"},
		{2, "/api/b/x", false, "/api/b/x "},     // /api/b/x, registered later, is tried first
		{1, "/api/a/k", false, "/api/a/{id} k"}, // not its path: the mux decides
		{0, "api/a/k", false, ""},               // no leading slash
	} {
		rt := routes[tt.route]
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path = tt.path
		got := httptest.NewRecorder()
		called := d[rt].call(got, req)
		want := httptest.NewRecorder()
		mux.ServeHTTP(want, req)
		if called != tt.direct {
			t.Errorf("%s on %s: called directly = %v, want %v", tt.path, rt.Key(), called, tt.direct)
		}
		if called && got.Body.String() != want.Body.String() {
			t.Errorf("%s on %s: direct %q, mux %q", tt.path, rt.Key(), got.Body, want.Body)
		}
		if tt.want != "" && want.Body.String() != tt.want {
			t.Errorf("%s: mux answered %q, want %q", tt.path, want.Body, tt.want)
		}
	}

	// The mux holds a handler for a pattern no route names: the patterns
	// it tries are not all known, so every route is left to it.
	mux, c, routes = directMux(t, "GET /api/a/{id}", "GET /api/a/{id}:do", "GET /api/z")
	if d := captureDirect(t.Context(), mux, c, routes[:2]); d != nil {
		t.Errorf("captured %d routes with an unclaimed handler in the mux, want none", len(d))
	}
	// A route whose probe reaches another pattern than its own.
	mux, c, routes = directMux(t, "GET /api/a/x", "GET /api/a/{id}")
	if d := captureDirect(t.Context(), mux, c, routes); d != nil {
		t.Errorf("captured %d routes though /api/a/x's probe reaches /api/a/{id}, want none", len(d))
	}
}

// BenchmarkDirectCall is the dispatch alone, on a mux of the dev config's
// routes (handlers that do nothing): the mux's match against a direct
// call.
func BenchmarkDirectCall(b *testing.B) {
	h := newHarness(b, setup{})
	var templates []string
	for _, rt := range h.srv.snap.Load().table.Routes() {
		templates = append(templates, rt.Method+" "+rt.Pattern)
	}
	mux, c, routes := directMux(b, templates...)
	d := captureDirect(b.Context(), mux, c, routes)
	for _, path := range []string{"/api/inventory/kb-1", "/api/orders/ord-1"} {
		var rt *route.Route
		for _, r := range routes {
			if r.Method == http.MethodGet && probePath(r.Pattern) == path[:strings.LastIndexByte(path, '/')]+"/~" {
				rt = r
			}
		}
		if d[rt] == nil {
			b.Fatalf("%s: no direct call", path)
		}
		req := httptest.NewRequest(http.MethodGet, path, nil)
		w := httptest.NewRecorder()
		b.Run("mux"+path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				mux.ServeHTTP(w, req)
			}
		})
		b.Run("direct"+path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d.serve(mux, w, req, rt)
			}
		})
	}
}

// FuzzDirectCall: for any path and any route, a direct call happens only
// when the mux calls that route's handler with the same parameters
// (handlers writing their pattern and "id").
func FuzzDirectCall(f *testing.F) {
	templates := []string{"GET /api/a/{id}", "GET /api/a/{id}:do", "GET /api/a", "GET /api/a:list", "GET /api/b/{id=**}",
		"GET /api/b/x", "GET /api/{id}/c/{n=shelves/*}", "GET /api/b/{id=**}:get", "POST /api/a/{id}:do"}
	for _, p := range []string{"/api/a/k", "/api/a/k:do", "/api/a/:do", "/api/b/x/y", "/api/b/x", "/api/q/c/shelves/1", "/api/b/p:get", "/api/a%2Fb", "/api/a:list"} {
		f.Add(p, uint8(0))
	}
	mux, c, routes := directMux(f, templates...)
	d := captureDirect(f.Context(), mux, c, routes)
	if len(d) != len(routes) {
		f.Fatalf("captured %d of %d routes", len(d), len(routes))
	}
	f.Fuzz(func(t *testing.T, path string, i uint8) {
		rt := routes[int(i)%len(routes)]
		req := httptest.NewRequest(rt.Method, "/", nil)
		u, err := url.Parse(path)
		if err != nil {
			t.Skip()
		}
		req.URL = u
		got, want := httptest.NewRecorder(), httptest.NewRecorder()
		if !d[rt].call(got, req) {
			return
		}
		mux.ServeHTTP(want, req)
		if got.Body.String() != want.Body.String() || got.Code != want.Code {
			t.Errorf("%s on %s: direct %d %q, mux %d %q", path, rt.Key(), got.Code, got.Body, want.Code, want.Body)
		}
	})
}
