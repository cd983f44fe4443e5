package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/tlsconfig"
	"github.com/portico-gateway/portico/internal/tlsconfig/tlstest"
)

// serveReloadable builds an edge from cfg (and opts) in front of h's
// upstreams and runs Serve on a free port, as the gateway process does; it returns once
// the edge answers. The test's cleanup shuts it down and waits for Serve.
func serveReloadable(t *testing.T, h *harness, cfg config.Config, scheme string, client *http.Client, opts ...Option) (*Server, string) {
	t.Helper()
	cfg.ShutdownGrace = 5 * time.Second
	opts = append([]Option{WithDialer(h.dial), WithLogger(discardLogger()), WithRegistry(prometheus.NewRegistry())}, opts...)
	srv, err := New(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve() = %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return within 10s of cancel")
		}
	})
	addr := lis.Addr().String()
	// The first answer means Serve set its listeners up: reloads move them.
	if code := get(t, client, scheme+"://"+addr+"/healthz/live", ""); code != 200 {
		t.Fatalf("GET /healthz/live = %d, want 200", code)
	}
	return srv, addr
}

// holdOrder makes GET /api/orders/slow wait, once called, until release
// closes.
func holdOrder(h *harness) (called, release chan struct{}) {
	called, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.order.getOrder = func(_ context.Context, r *orderv1.GetOrderRequest) (*orderv1.Order, error) {
		if r.GetId() == "slow" {
			once.Do(func() { close(called) })
			<-release
		}
		return &orderv1.Order{Id: r.GetId()}, nil
	}
	return called, release
}

// refused reports whether nothing accepts connections at addr.
func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// TestReloadMovesListener: a reload that changes listen serves on the new
// address at once; the old one refuses new connections, and a request in
// flight on it completes with 200.
func TestReloadMovesListener(t *testing.T) {
	h := newHarness(t, setup{})
	called, release := holdOrder(h)
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	srv, old := serveReloadable(t, h, h.cfg, "http", client)

	inflight := make(chan int, 1)
	go func() { inflight <- get(t, client, "http://"+old+"/api/orders/slow", adminToken) }()
	await(t, called, "the upstream never got the in-flight call")
	next := srv.Config()
	next.Listen = closedAddr(t)
	if _, err := srv.Reload(t.Context(), next, SourceAdmin); err != nil {
		t.Fatalf("Reload(listen %s) = %v", next.Listen, err)
	}
	if code := get(t, client, "http://"+next.Listen+"/api/orders/ord-1", adminToken); code != 200 {
		t.Errorf("GET on the new address = %d, want 200", code)
	}
	if !refused(old) {
		t.Errorf("the old address %s still accepts connections after the reload", old)
	}
	close(release)
	if code := <-inflight; code != 200 {
		t.Errorf("request in flight on the old address = %d, want 200", code)
	}
}

// TestReloadCannotBind: a reload naming an address that is taken is
// rejected and counted; nothing moves, not even an address of the same
// reload that could be bound, and the edge keeps serving where it was.
func TestReloadCannotBind(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name   string
		change func(c *config.Config, free string)
	}{
		{"listen taken", func(c *config.Config, _ string) { c.Listen = busy.Addr().String() }},
		{"admin_listen taken", func(c *config.Config, _ string) { c.AdminListen = busy.Addr().String() }},
		{"listen free, admin_listen taken", func(c *config.Config, free string) {
			c.Listen, c.AdminListen = free, busy.Addr().String()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{})
			okStubs(h)
			client := &http.Client{Timeout: 10 * time.Second}
			defer client.CloseIdleConnections()
			srv, addr := serveReloadable(t, h, h.cfg, "http", client)
			live := srv.snap.Load().version.ID
			next, free := srv.Config(), closedAddr(t)
			tt.change(&next, free)
			_, err := srv.Reload(t.Context(), next, SourceAdmin)
			if !errors.Is(err, syscall.EADDRINUSE) {
				t.Fatalf("Reload() = %v, want EADDRINUSE", err)
			}
			if got := srv.snap.Load().version.ID; got != live {
				t.Errorf("live version = %s, want %s still", got, live)
			}
			if got := testutil.ToFloat64(srv.reloads.reloads.WithLabelValues("rejected")); got != 1 {
				t.Errorf(`portico_gateway_config_reloads_total{result="rejected"} = %v, want 1`, got)
			}
			if code := get(t, client, "http://"+addr+"/api/orders/ord-1", adminToken); code != 200 {
				t.Errorf("GET on the running address = %d, want 200", code)
			}
			if !refused(free) {
				t.Errorf("the free address %s of the rejected reload was left open", free)
			}
		})
	}
}

// TestReloadAdminListen: admin_listen set by a reload starts the admin
// API, a changed one moves it, and "" stops it.
func TestReloadAdminListen(t *testing.T) {
	h := newHarness(t, setup{})
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	srv, _ := serveReloadable(t, h, h.cfg, "http", client)
	var prev string
	for _, step := range []struct {
		name  string
		admin string
	}{
		{"on", closedAddr(t)},
		{"moved", closedAddr(t)},
		{"off", ""},
	} {
		next := srv.Config()
		next.AdminListen = step.admin
		if _, err := srv.Reload(t.Context(), next, SourceAdmin); err != nil {
			t.Fatalf("%s: Reload(admin_listen %q) = %v", step.name, step.admin, err)
		}
		if step.admin != "" {
			if code := get(t, client, "http://"+step.admin+"/healthz/live", ""); code != 200 {
				t.Errorf("%s: admin /healthz/live = %d, want 200", step.name, code)
			}
			if code := get(t, client, "http://"+step.admin+"/admin/config", readerToken); code != 403 {
				t.Errorf("%s: admin /admin/config as reader = %d, want 403", step.name, code)
			}
		}
		if prev != "" && !refused(prev) {
			t.Errorf("%s: the previous admin address %s still accepts connections", step.name, prev)
		}
		prev = step.admin
	}
}

// TestReloadHTTPTimeouts: a changed http section applies to new
// connections; a connection kept alive from before is answered once more
// with Connection: close, so its client moves to the new settings.
func TestReloadHTTPTimeouts(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	tr := &http.Transport{MaxConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	cfg := h.cfg
	cfg.HTTP.ReadHeaderTimeout = time.Minute
	srv, addr := serveReloadable(t, h, cfg, "http", client)

	next := srv.Config()
	next.HTTP.ReadHeaderTimeout = config.MinHTTPTimeout
	if _, err := srv.Reload(t.Context(), next, SourceAdmin); err != nil {
		t.Fatalf("Reload() = %v", err)
	}
	resp, err := client.Get("http://" + addr + "/healthz/live") // on the kept-alive connection
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Close {
		t.Errorf("GET on a connection from before the reload = %d, close %v; want 200 and Connection: close", resp.StatusCode, resp.Close)
	}

	// A new connection that never finishes its headers is closed by the
	// new read_header_timeout, long before the old minute.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /healthz/live HTTP/1.1\r\nHost: edge\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Error("a connection with unfinished headers is still open after 5s; want it closed by the new read_header_timeout (100ms)")
	}
}

// TestReloadTLSCertificate: a reload naming another certificate serves it
// on the next handshake, while a request in flight on a connection made
// with the old one completes.
func TestReloadTLSCertificate(t *testing.T) {
	ca := tlstest.NewCA(t, "edge")
	certA, keyA := ca.Issue(t, "edge-a", "127.0.0.1")
	certB, keyB := ca.Issue(t, "edge-b", "127.0.0.1")
	h := newHarness(t, setup{cfg: func(c *config.Config) { c.TLS = config.TLSConfig{CertFile: certA, KeyFile: keyA} }})
	called, release := holdOrder(h)
	newClient := h2Clients(t, ca.File) // each a new handshake
	old := newClient()
	srv, addr := serveReloadable(t, h, h.cfg, "https", old)
	peer := func(c *http.Client, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "https://"+addr+path, nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("GET %s: %v", path, err)
			return 0, ""
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.TLS.PeerCertificates[0].Subject.CommonName
	}

	type answer struct {
		code int
		cn   string
	}
	inflight := make(chan answer, 1)
	go func() { code, cn := peer(old, "/api/orders/slow"); inflight <- answer{code, cn} }()
	await(t, called, "the upstream never got the in-flight call")
	next := srv.Config()
	next.TLS = config.TLSConfig{CertFile: certB, KeyFile: keyB}
	if _, err := srv.Reload(t.Context(), next, SourceAdmin); err != nil {
		t.Fatalf("Reload() = %v", err)
	}
	if code, cn := peer(newClient(), "/healthz/live"); code != 200 || cn != "edge-b" {
		t.Errorf("a new handshake after the reload = %d with %q, want 200 with edge-b", code, cn)
	}
	close(release)
	if a := <-inflight; a.code != 200 || a.cn != "edge-a" {
		t.Errorf("request in flight over the old handshake = %d with %q, want 200 with edge-a", a.code, a.cn)
	}
}

// TestReloadTLSOnOff: a reload that adds a tls section makes new
// connections HTTPS; one that removes it makes them plaintext again.
func TestReloadTLSOnOff(t *testing.T) {
	ca := tlstest.NewCA(t, "edge")
	cert, key := ca.Issue(t, "edge", "127.0.0.1")
	h := newHarness(t, setup{})
	plain := &http.Client{Timeout: 10 * time.Second}
	srv, addr := serveReloadable(t, h, h.cfg, "http", plain)
	clientTLS, _ := tlsconfig.Client(ca.File, "", "", "")
	for _, step := range []struct {
		name   string
		tls    config.TLSConfig
		scheme string
	}{
		{"on", config.TLSConfig{CertFile: cert, KeyFile: key}, "https"},
		{"off", config.TLSConfig{}, "http"},
	} {
		next := srv.Config()
		next.TLS = step.tls
		if _, err := srv.Reload(t.Context(), next, SourceAdmin); err != nil {
			t.Fatalf("%s: Reload() = %v", step.name, err)
		}
		if step.name == "on" { // plain's connection from before is told to close
			resp, err := plain.Get("http://" + addr + "/healthz/live")
			if err != nil {
				t.Fatalf("plaintext keep-alive request after TLS went on: %v", err)
			}
			resp.Body.Close()
			if !resp.Close {
				t.Error("a plaintext connection open before TLS went on was not told Connection: close")
			}
		}
		tr := &http.Transport{TLSClientConfig: clientTLS.Clone(), ForceAttemptHTTP2: true}
		c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		if code := get(t, c, step.scheme+"://"+addr+"/healthz/live", ""); code != 200 {
			t.Errorf("%s: GET %s = %d, want 200", step.name, step.scheme, code)
		}
		tr.CloseIdleConnections()
	}
	plain.CloseIdleConnections()
}

// TestReloadRotatesIdentity: the identity signer follows the live config:
// a reload naming another keys file signs the next call with its first
// key, and a changed file is picked up between reloads.
func TestReloadRotatesIdentity(t *testing.T) {
	k1, k2, k3 := identity.GenerateKey("k1"), identity.GenerateKey("k2"), identity.GenerateKey("k3")
	ring, err := identity.NewKeys(k1, k2, k3) // the services accept all three
	if err != nil {
		t.Fatal(err)
	}
	v, err := identity.NewVerifier(ring, "portico.inventory.v1.InventoryService")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, keys ...identity.Key) string {
		t.Helper()
		var lines []string
		for _, k := range keys {
			lines = append(lines, k.String())
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var mu sync.Mutex
	var kid string // the key id of the last assertion the upstream verified
	record := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		if toks := md.Get(callmeta.IdentityKey); len(toks) == 1 {
			if parts := strings.Split(toks[0], "."); len(parts) == 4 {
				mu.Lock()
				kid = parts[1]
				mu.Unlock()
			}
		}
		return identity.UnaryServerInterceptor(v)(ctx, req, info, next)
	}
	first := write("first.keys", k1)
	h := newHarness(t, setup{cfg: func(c *config.Config) { c.Identity.KeysFile = first },
		serve: map[string]grpc.UnaryServerInterceptor{"inventory": record}})
	h.inv.getItem = func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		return &inventoryv1.Item{Sku: "keyboard-001"}, nil
	}
	tests := []struct {
		name    string
		change  func(t *testing.T)
		wantKid string
	}{
		{"at start", func(*testing.T) {}, "k1"},
		{"a reload names another file", func(t *testing.T) {
			next := h.srv.Config()
			next.Identity.KeysFile = write("second.keys", k2, k1)
			if _, err := h.srv.Reload(t.Context(), next, SourceAdmin); err != nil {
				t.Fatalf("Reload() = %v", err)
			}
		}, "k2"},
		{"the live file changes", func(t *testing.T) {
			write("second.keys", k3, k2)
			if err := h.srv.refreshIdentityKeys(); err != nil {
				t.Fatalf("refreshIdentityKeys() = %v", err)
			}
		}, "k3"},
		{"a reload changes the ttl only", func(t *testing.T) {
			next := h.srv.Config()
			next.Identity.TTL = 2 * time.Minute
			if _, err := h.srv.Reload(t.Context(), next, SourceAdmin); err != nil {
				t.Fatalf("Reload() = %v", err)
			}
		}, "k3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change(t)
			if r := h.do("GET", "/api/inventory/keyboard-001", readerToken, ""); r.status != 200 {
				t.Fatalf("GET = %d %s, want 200", r.status, r.body)
			}
			mu.Lock()
			defer mu.Unlock()
			if kid != tt.wantKid {
				t.Errorf("the upstream verified an assertion of key %q, want %q", kid, tt.wantKid)
			}
		})
	}
}

// TestSameConnUpstreamTLS: a changed tls section of an upstream is a new
// connection (the old one drains), like a changed address.
func TestSameConnUpstreamTLS(t *testing.T) {
	base := config.UpstreamConfig{Name: "inventory", Addresses: []string{"127.0.0.1:1"}, Timeout: time.Second}
	tests := []struct {
		name string
		b    func(u config.UpstreamConfig) config.UpstreamConfig
		want bool
	}{
		{"timeout only", func(u config.UpstreamConfig) config.UpstreamConfig { u.Timeout = 2 * time.Second; return u }, true},
		{"tls on", func(u config.UpstreamConfig) config.UpstreamConfig { u.TLS.Enabled = true; return u }, false},
		{"tls server name", func(u config.UpstreamConfig) config.UpstreamConfig { u.TLS.ServerName = "inv"; return u }, false},
		{"tls client pair", func(u config.UpstreamConfig) config.UpstreamConfig {
			u.TLS.CertFile, u.TLS.KeyFile = "c", "k"
			return u
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameConn(base, tt.b(base)); got != tt.want {
				t.Errorf("sameConn() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestReloadHTTPUnderLoad: reloads that change the http section while
// keep-alive clients send non-idempotent requests (which no client
// retries) fail none of them: a retired connection is never closed under
// a client, only after an answer that says Connection: close.
func TestReloadHTTPUnderLoad(t *testing.T) {
	h := newHarness(t, setup{})
	okStubs(h)
	client := &http.Client{Timeout: 10 * time.Second}
	srv, addr := serveReloadable(t, h, h.cfg, "http", client)
	const workers, perWorker, reloads = 3, 40, 10
	var failed atomic.Int32
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
			for i := range perWorker {
				url := fmt.Sprintf("http://%s/api/orders/o-%d-%d:cancel", addr, w, i)
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
				req.GetBody = nil // not replayable: the transport never retries it
				req.Header.Set("Authorization", "Bearer "+adminToken)
				req.Header.Set("Content-Type", "application/json")
				resp, err := c.Do(req)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, resp.Status)
				}
			}
		})
	}
	for i := range reloads {
		next := srv.Config()
		next.HTTP.IdleTimeout = time.Minute + time.Duration(i)*time.Second
		if _, err := srv.Reload(t.Context(), next, SourceSignal); err != nil {
			t.Fatalf("Reload %d = %v", i, err)
		}
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d requests failed during reloads; first: %v", n, workers*perWorker, firstErr.Load())
	}
	client.CloseIdleConnections()
}

// TestEdgeClientCA: with tls.client_ca_file the edge requires a client
// certificate its CAs signed; a reload that drops it serves clients
// without one on their next handshake.
func TestEdgeClientCA(t *testing.T) {
	ca := tlstest.NewCA(t, "edge")
	cert, key := ca.Issue(t, "edge", "127.0.0.1")
	clientCert, clientKey := ca.Issue(t, "client", "client")
	h := newHarness(t, setup{cfg: func(c *config.Config) { c.TLS = config.TLSConfig{CertFile: cert, KeyFile: key, ClientCAFile: ca.File} }})
	withCert, err := tlsconfig.Client(ca.File, clientCert, clientKey, "")
	if err != nil {
		t.Fatal(err)
	}
	without, _ := tlsconfig.Client(ca.File, "", "", "")
	client := func(c *tls.Config) *http.Client {
		tr := &http.Transport{TLSClientConfig: c.Clone(), ForceAttemptHTTP2: true}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}
	}
	srv, addr := serveReloadable(t, h, h.cfg, "https", client(withCert))
	url := "https://" + addr + "/healthz/live"
	if code := get(t, client(without), url, ""); code != 0 {
		t.Errorf("GET without a client certificate = %d, want a failed handshake", code)
	}
	next := srv.Config()
	next.TLS.ClientCAFile = ""
	if _, err := srv.Reload(t.Context(), next, SourceAdmin); err != nil {
		t.Fatalf("Reload() = %v", err)
	}
	if code := get(t, client(without), url, ""); code != 200 {
		t.Errorf("GET without a client certificate after the reload = %d, want 200", code)
	}
}
