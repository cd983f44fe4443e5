package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/portico-gateway/portico/gateway/config"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/tlsconfig"
	"github.com/portico-gateway/portico/internal/tlsconfig/tlstest"
)

// connStats is what a test waits on: the cap's state.
type connStats struct{ max, open, idle, closed, paused int }

// waitConns waits, on the cap's own change events, until cond holds.
func waitConns(t *testing.T, l *connLimit, what string, cond func(connStats) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		st := l.statsLocked()
		if cond(st) {
			return
		}
		if !l.wait(ctx.Done()) {
			t.Fatalf("%s: not within 10s; connections %+v", what, st)
		}
	}
}

// serveCapped serves h's edge with the API's connections capped at max,
// logging to logs, and waits until the connection its first answer used
// is gone, so that the test counts its own.
func serveCapped(t *testing.T, h *harness, max int) (*Server, string) {
	t.Helper()
	return serveCappedWith(t, h, max, "http", &http.Client{Timeout: 10 * time.Second})
}

// serveCappedWith is serveCapped for a scheme and the client that asks first.
func serveCappedWith(t *testing.T, h *harness, max int, scheme string, client *http.Client) (*Server, string) {
	t.Helper()
	cfg := h.cfg
	cfg.HTTP.MaxConnections = max
	srv, addr := serveReloadable(t, h, cfg, scheme, client, WithLogger(logging.New(h.logs, "gateway", slog.LevelDebug)))
	client.CloseIdleConnections()
	waitConns(t, srv.conns, "the first answer's connection closed", func(st connStats) bool { return st.open == 0 })
	return srv, addr
}

// edgeConn is one client connection to the edge, HTTP/1.1 by hand, so a
// test knows which connection each request uses.
type edgeConn struct {
	net.Conn
	r *bufio.Reader
}

func dialEdge(t *testing.T, addr string) *edgeConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &edgeConn{Conn: c, r: bufio.NewReader(c)}
}

// send writes a GET of path, with Connection: close when last.
func (c *edgeConn) send(t *testing.T, path string, last bool) {
	t.Helper()
	req := "GET " + path + " HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + adminToken + "\r\n"
	if last {
		req += "Connection: close\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
}

// status reads one answer (within 10s) and returns its status.
func (c *edgeConn) status() (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// get sends a GET of path and wants 200.
func (c *edgeConn) get(t *testing.T, path string) {
	t.Helper()
	c.send(t, path, false)
	if code, err := c.status(); code != 200 {
		t.Fatalf("GET %s = %d, %v; want 200", path, code, err)
	}
}

// holdOrders makes GET /api/orders/{id} report each call on arrived and
// wait for a value on release, one per call.
func holdOrders(h *harness) (arrived chan string, release chan struct{}) {
	arrived, release = make(chan string, 8), make(chan struct{})
	h.order.getOrder = func(ctx context.Context, r *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		arrived <- r.GetId()
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &orderv1.Order{Id: r.GetId()}, nil
	}
	return arrived, release
}

// awaitCalls waits for n calls on arrived (holdOrders).
func awaitCalls(t *testing.T, arrived <-chan string, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for i := range n {
		select {
		case <-arrived:
		case <-timeout:
			t.Fatalf("%d of %d held calls reached the upstream within 10s", i, n)
		}
	}
}

// TestMaxConnectionsClosesIdle: at a cap of 2 with both connections idle,
// a third is served and the one idle longest is closed; the other stays.
func TestMaxConnectionsClosesIdle(t *testing.T) {
	h := newHarness(t, setup{})
	srv, addr := serveCapped(t, h, 2)
	l := srv.conns

	first := dialEdge(t, addr)
	first.get(t, "/healthz/live")
	waitConns(t, l, "first idle", func(st connStats) bool { return st.idle == 1 })
	second := dialEdge(t, addr)
	second.get(t, "/healthz/live")
	waitConns(t, l, "both idle", func(st connStats) bool { return st.idle == 2 })

	third := dialEdge(t, addr)
	third.get(t, "/healthz/live")
	waitConns(t, l, "the oldest idle connection closed", func(st connStats) bool { return st.closed == 1 && st.open == 2 })
	_ = first.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := first.r.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("read on the connection idle longest = %d, %v; want EOF (closed to make room)", n, err)
	}
	second.get(t, "/healthz/live") // still open
	if got := testutil.ToFloat64(l.m.closed); got != 1 {
		t.Errorf("portico_gateway_connections_idle_closed_total = %v, want 1", got)
	}
	if got := testutil.ToFloat64(l.m.open); got != 2 {
		t.Errorf("portico_gateway_connections_open = %v, want 2", got)
	}
	if got := testutil.ToFloat64(l.m.paused); got != 0 {
		t.Errorf("portico_gateway_accept_paused_total = %v, want 0 (an idle connection made room)", got)
	}
	if got := testutil.ToFloat64(l.m.pausedNow); got != 0 {
		t.Errorf("portico_gateway_accept_paused = %v, want 0 (never paused)", got)
	}
}

// TestMaxConnectionsClosesIdleH2: over TLS with HTTP/2, whose connections
// go idle by its own ConnState calls (no stream open), the connection idle
// longest is closed for a third; the other is reused.
func TestMaxConnectionsClosesIdleH2(t *testing.T) {
	ca := tlstest.NewCA(t, "edge")
	cert, key := ca.Issue(t, "edge", "127.0.0.1")
	h := newHarness(t, setup{cfg: func(c *config.Config) { c.TLS = config.TLSConfig{CertFile: cert, KeyFile: key} }})
	newClient := h2Clients(t, ca.File) // each its own connection
	srv, addr := serveCappedWith(t, h, 2, "https", newClient())
	l := srv.conns
	get := func(c *http.Client) (reused bool) {
		t.Helper()
		ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/healthz/live", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
			t.Fatalf("GET = %d over HTTP/%d, want 200 over HTTP/2", resp.StatusCode, resp.ProtoMajor)
		}
		return reused
	}
	first, second := newClient(), newClient()
	get(first)
	waitConns(t, l, "first idle", func(st connStats) bool { return st.idle == 1 })
	get(second)
	waitConns(t, l, "both idle", func(st connStats) bool { return st.idle == 2 })
	get(newClient())
	waitConns(t, l, "the oldest idle connection closed", func(st connStats) bool { return st.closed == 1 && st.open == 2 })
	if !get(second) {
		t.Error("the second connection, idle for less long, was not reused")
	}
	if st := l.stats(); st.closed != 1 {
		t.Errorf("after reusing the second: %+v, want 1 closed", st)
	}
}

// TestMaxConnectionsPauses: at a cap of 2 with both connections mid-request,
// a third connects (the kernel's backlog) but is not served until one of
// them finishes; the pause is counted and logged.
func TestMaxConnectionsPauses(t *testing.T) {
	h := newHarness(t, setup{})
	arrived, release := holdOrders(h)
	srv, addr := serveCapped(t, h, 2)
	l := srv.conns

	busy := [2]*edgeConn{dialEdge(t, addr), dialEdge(t, addr)}
	answered := make(chan error, len(busy))
	for i, c := range busy {
		c.send(t, fmt.Sprintf("/api/orders/held-%d", i), true)
		go func() {
			code, err := c.status()
			if code != 200 {
				err = fmt.Errorf("held request %d = %d, %v; want 200", i, code, err)
			}
			answered <- err
		}()
	}
	awaitCalls(t, arrived, len(busy))
	waitConns(t, l, "accept paused at the cap", func(st connStats) bool { return st.paused == 1 })
	if got := len(h.logs.lines(t, pauseLine)); got != 1 {
		t.Errorf("%d pause lines, want 1", got)
	}
	if got := testutil.ToFloat64(l.m.pausedNow); got != 1 {
		t.Errorf("portico_gateway_accept_paused = %v while paused, want 1", got)
	}

	third := dialEdge(t, addr)
	third.send(t, "/healthz/live", false)
	// The one wait on time: nothing may answer while the cap is full.
	_ = third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var ne net.Error
	if _, err := third.r.Peek(1); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("a third connection at the cap got %v; want no answer while both are busy", err)
	}
	release <- struct{}{}
	if err := <-answered; err != nil {
		t.Error(err)
	}
	if code, err := third.status(); code != 200 {
		t.Errorf("third connection once one finished = %d, %v; want 200", code, err)
	}
	release <- struct{}{}
	if err := <-answered; err != nil {
		t.Error(err)
	}
	// The third, new, fills the cap again: the loop paused once more.
	if got, want := testutil.ToFloat64(l.m.paused), l.stats().paused; got != float64(want) || want < 1 {
		t.Errorf("portico_gateway_accept_paused_total = %v, want %d (at least 1)", got, want)
	}
}

const pauseLine = "connection cap reached; accepting paused until a connection closes or goes idle"

// TestMaxConnectionsOff: -1 is no cap: three requests are in flight at
// once on three connections, and accept never pauses.
func TestMaxConnectionsOff(t *testing.T) {
	h := newHarness(t, setup{})
	arrived, release := holdOrders(h)
	srv, addr := serveCapped(t, h, -1)
	conns := []*edgeConn{dialEdge(t, addr), dialEdge(t, addr), dialEdge(t, addr)}
	for i, c := range conns {
		c.send(t, fmt.Sprintf("/api/orders/held-%d", i), false)
	}
	awaitCalls(t, arrived, len(conns))
	close(release)
	for i, c := range conns {
		if code, err := c.status(); code != 200 {
			t.Errorf("request %d = %d, %v; want 200", i, code, err)
		}
	}
	if got := testutil.ToFloat64(srv.conns.m.paused); got != 0 {
		t.Errorf("portico_gateway_accept_paused_total = %v, want 0", got)
	}
	if got := testutil.ToFloat64(srv.conns.m.max); got != -1 {
		t.Errorf("portico_gateway_connections_max = %v, want -1", got)
	}
}

// TestMaxConnectionsReload: a reload raising the cap resumes a paused
// accept loop at once, without a new generation; one setting it to 0 gets
// the default from the open-file limit.
func TestMaxConnectionsReload(t *testing.T) {
	h := newHarness(t, setup{})
	arrived, release := holdOrders(h)
	defer close(release)
	srv, addr := serveCapped(t, h, 1)
	l := srv.conns
	gen := srv.lis.api.cur.Load()

	before := l.stats().paused // serveCapped's first connection, new, filled the cap too
	held := dialEdge(t, addr)
	held.send(t, "/api/orders/held", false)
	awaitCalls(t, arrived, 1)
	waitConns(t, l, "accept paused at the cap", func(st connStats) bool { return st.paused > before })
	next := srv.Config()
	next.HTTP.MaxConnections = 2
	if _, err := srv.Reload(t.Context(), next, SourceAdmin); err != nil {
		t.Fatalf("Reload(max_connections 2) = %v", err)
	}
	dialEdge(t, addr).get(t, "/healthz/live")
	if st := l.stats(); st.closed != 0 || st.open != 2 {
		t.Errorf("after the reload: %+v; want the held connection open beside the new one, none closed to make room", st)
	}
	if srv.lis.api.cur.Load() != gen {
		t.Error("a reload changing only max_connections started a new generation")
	}
	next.HTTP.MaxConnections = 0
	if _, err := srv.Reload(t.Context(), next, SourceAdmin); err != nil {
		t.Fatalf("Reload(max_connections 0) = %v", err)
	}
	if want := config.DefaultMaxConnections(openFileLimit()); l.stats().max != want {
		t.Errorf("cap after max_connections 0 = %d, want %d (from the open-file limit)", l.stats().max, want)
	}
}

func (l *connLimit) stats() connStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.statsLocked()
}

func (l *connLimit) statsLocked() connStats {
	return connStats{max: l.max, open: l.open, idle: l.idle.Len(), closed: int(testutil.ToFloat64(l.m.closed)), paused: l.paused}
}

// TestConnSummary: check-config says the cap and, for the default, the
// limit it comes from.
func TestConnSummary(t *testing.T) {
	for _, tt := range []struct {
		max    int
		nofile uint64
		want   string
	}{
		{0, 20000, "http.max_connections 16000 (default: open-file limit 20000 here, less max(256, limit/5))"},
		{0, 0, "http.max_connections 4096 (default: open-file limit unknown or unlimited here)"},
		{-1, 20000, "http.max_connections -1: no cap (only the open-file limit stops connections)"},
		{500, 20000, "http.max_connections 500"},
		{19744, 20000, "http.max_connections 19744"},
		{19745, 20000, "http.max_connections 19745: WARNING above the open-file limit 20000 here less 256 for upstreams and files; " +
			"accepting can fail with EMFILE (too many open files) before the cap"},
		{500, 0, "http.max_connections 500"},
		{64, 100, "http.max_connections 64: WARNING above the open-file limit 100 here less 256 for upstreams and files; " +
			"accepting can fail with EMFILE (too many open files) before the cap"}, // a limit below the reserve must not wrap around
	} {
		if got := connSummary(tt.max, tt.nofile); got != tt.want {
			t.Errorf("connSummary(%d, %d) = %q, want %q", tt.max, tt.nofile, got, tt.want)
		}
	}
}

// TestConnLimitEvicts: only a connection ConnState last called idle is
// closed to make room, the one idle longest first; one that turned active
// (its next request read) or closed is not.
func TestConnLimitEvicts(t *testing.T) {
	type step struct {
		conn int
		st   http.ConnState
	}
	const none = -1
	for _, tt := range []struct {
		name  string
		steps []step
		want  int // the conn evicted, or none
	}{
		{"new", []step{{0, http.StateNew}}, none},
		{"idle", []step{{0, http.StateNew}, {0, http.StateActive}, {0, http.StateIdle}}, 0},
		{"active again", []step{{0, http.StateNew}, {0, http.StateIdle}, {0, http.StateActive}}, none},
		{"idle again", []step{{0, http.StateNew}, {0, http.StateIdle}, {0, http.StateActive}, {0, http.StateIdle}}, 0},
		{"closed", []step{{0, http.StateNew}, {0, http.StateIdle}, {0, http.StateClosed}}, none},
		{"hijacked", []step{{0, http.StateNew}, {0, http.StateIdle}, {0, http.StateHijacked}}, none},
		{"oldest first", []step{{0, http.StateNew}, {1, http.StateNew}, {0, http.StateIdle}, {1, http.StateIdle}}, 0},
		{"idle since last", []step{{0, http.StateNew}, {1, http.StateNew}, {0, http.StateIdle}, {1, http.StateIdle},
			{0, http.StateActive}, {0, http.StateIdle}}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := newConnLimit(prometheus.NewRegistry(), discardLogger())
			if err != nil {
				t.Fatal(err)
			}
			var conns [2]net.Conn
			for i := range conns {
				a, b := net.Pipe()
				defer a.Close()
				defer b.Close()
				conns[i] = a
			}
			for _, s := range tt.steps {
				if s.st == http.StateNew {
					l.admit(nil)
				}
				l.track(conns[s.conn], s.st)
			}
			l.mu.Lock()
			got := l.evict()
			l.mu.Unlock()
			i := none
			for j, c := range conns {
				if got == c {
					i = j
				}
			}
			if i != tt.want || (got == nil) != (tt.want == none) {
				t.Errorf("evict() = conn %d, want conn %d (-1: none)", i, tt.want)
			}
		})
	}
}

// h2Clients returns a maker of HTTPS clients that trust caFile and prefer
// HTTP/2, each on a transport of its own (so a connection and a handshake
// of its own), closed when t ends.
func h2Clients(t *testing.T, caFile string) func() *http.Client {
	t.Helper()
	clientTLS, err := tlsconfig.Client(caFile, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	return func() *http.Client {
		tr := &http.Transport{TLSClientConfig: clientTLS.Clone(), ForceAttemptHTTP2: true}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}
	}
}

// BenchmarkConnLimitTrack is what the cap adds to each request on a
// kept-alive connection: net/http's two ConnState calls (active, idle).
func BenchmarkConnLimitTrack(b *testing.B) {
	l, err := newConnLimit(prometheus.NewRegistry(), discardLogger())
	if err != nil {
		b.Fatal(err)
	}
	l.setMax(1000)
	conns := make([]net.Conn, 64)
	for i := range conns {
		c, s := net.Pipe()
		b.Cleanup(func() { c.Close(); s.Close() })
		conns[i] = c
		l.admit(nil)
		l.track(c, http.StateNew)
		l.track(c, http.StateIdle)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := conns[i%len(conns)]
		l.track(c, http.StateActive)
		l.track(c, http.StateIdle)
		i++
	}
}

// TestIdleList checks the intrusive list against the order a slice keeps:
// removals from the front, the middle and the back, and re-adds.
func TestIdleList(t *testing.T) {
	tests := []struct {
		name string
		ops  []int // n >= 0: push entry n; -n-1: remove entry n
		want []int
	}{
		{"pushes keep order", []int{0, 1, 2}, []int{0, 1, 2}},
		{"remove front", []int{0, 1, 2, -1}, []int{1, 2}},
		{"remove middle", []int{0, 1, 2, -2}, []int{0, 2}},
		{"remove back", []int{0, 1, 2, -3}, []int{0, 1}},
		{"remove all, push again", []int{0, 1, -1, -2, 1, 0}, []int{1, 0}},
		{"re-add goes to the back", []int{0, 1, 2, -1, 0}, []int{1, 2, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q idleList
			es := make([]*connEntry, 3)
			for i := range es {
				es[i] = &connEntry{}
			}
			for _, op := range tt.ops {
				if op >= 0 {
					q.pushBack(es[op])
				} else {
					q.remove(es[-op-1])
				}
			}
			var got, back []int
			for e := q.front; e != nil; e = e.next {
				got = append(got, slices.Index(es, e))
			}
			for e := q.back; e != nil; e = e.prev {
				back = append([]int{slices.Index(es, e)}, back...)
			}
			if !slices.Equal(got, tt.want) || !slices.Equal(back, tt.want) || q.Len() != len(tt.want) {
				t.Errorf("front to back %v, back to front %v, len %d; want %v", got, back, q.Len(), tt.want)
			}
		})
	}
}
