package gateway

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/testproc"
)

// Demo tokens of config.Dev.
const (
	adminToken  = "demo-admin-token"
	readerToken = "demo-read-token"
	aliceToken  = "demo-alice-token"
	bobToken    = "demo-bob-token"
)

// harness is the edge in front of three stub upstreams on loopback TCP
// (free ports), served by a real HTTP server. TCP rather than bufconn: the
// edge dials /health's connections itself with Dial, which only a real
// address reaches.
type harness struct {
	t        testing.TB
	order    *orderStub
	inv      *inventoryStub
	pay      *paymentStub
	health   map[string]*health.Server
	servers  map[string]*grpc.Server
	cfg      config.Config
	srv      *Server
	http     *httptest.Server
	logs     *syncBuffer
	registry *prometheus.Registry
	dial     DialFunc
}

// setup adjusts a harness before the edge starts.
type setup struct {
	cfg     func(*config.Config)
	down    []string                               // upstreams without a server: dialed at a closed TCP port
	chain   map[string]grpc.UnaryClientInterceptor // the DialFunc's, per upstream
	serve   map[string]grpc.UnaryServerInterceptor // the upstream server's
	srvOpts []grpc.ServerOption                    // every upstream server's (TLS)
	regs    []registration
	opts    []Option // more options for New
}

func newHarness(t testing.TB, su setup) *harness {
	t.Helper()
	h := &harness{
		t: t, order: &orderStub{}, inv: &inventoryStub{}, pay: &paymentStub{},
		health: map[string]*health.Server{}, servers: map[string]*grpc.Server{},
		logs: &syncBuffer{}, registry: prometheus.NewRegistry(),
	}
	h.cfg = config.Dev(0)
	h.cfg.Limits = config.LimitsConfig{} // tests that send many requests stay under no limit; limits tests set their own
	h.cfg.AdminListen = ""               // Serve would open it; tests that want one set a free port
	if su.cfg != nil {
		su.cfg(&h.cfg)
	}
	if descriptorPath != "" && su.regs == nil {
		toDescriptors(t, &h.cfg, descriptorPath == "reflection")
	}
	for i, up := range h.cfg.Upstreams {
		if contains(su.down, up.Name) {
			h.cfg.Upstreams[i].Addresses = []string{closedAddr(t)}
			continue
		}
		h.cfg.Upstreams[i].Addresses = []string{h.startUpstream(up, su.serve[up.Name], su.srvOpts...)}
	}
	h.dial = h.dialer(su.chain)
	opts := []Option{
		WithDialer(h.dial),
		WithLogger(logging.New(h.logs, "gateway", slog.LevelDebug)),
		WithRegistry(h.registry),
	}
	opts = append(opts, su.opts...)
	if su.regs != nil {
		opts = append(opts, func(o *options) { o.registrations = su.regs })
	}
	srv, err := New(context.Background(), h.cfg, opts...)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	h.srv = srv
	h.http = httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		h.http.Close()
		srv.Close()
		for _, s := range h.servers {
			s.Stop()
		}
	})
	return h
}

// startUpstream serves all three stubs and health on a free loopback port
// and returns its address; ic, when not nil, intercepts every call.
func (h *harness) startUpstream(up config.UpstreamConfig, ic grpc.UnaryServerInterceptor, opts ...grpc.ServerOption) string {
	return h.startUpstreamAt("127.0.0.1:0", up, ic, opts...)
}

// startUpstreamAt is startUpstream on addr.
func (h *harness) startUpstreamAt(addr string, up config.UpstreamConfig, ic grpc.UnaryServerInterceptor, opts ...grpc.ServerOption) string {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		h.t.Fatal(err)
	}
	if ic != nil {
		opts = append(opts, grpc.UnaryInterceptor(ic))
	}
	s := grpc.NewServer(opts...)
	inventoryv1.RegisterInventoryServiceServer(s, h.inv)
	paymentv1.RegisterPaymentServiceServer(s, h.pay)
	orderv1.RegisterOrderServiceServer(s, h.order)
	reflection.Register(s)
	hs := health.NewServer()
	hs.SetServingStatus(up.HealthService, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	h.health[up.Name], h.servers[up.Name] = hs, s
	h.t.Cleanup(s.Stop) // a second server for a name replaces the first in h.servers
	go func() { _ = s.Serve(l) }()
	return l.Addr().String()
}

// dialer is Dial with the upstream's chain interceptor, as the cmd layer's
// DialFunc adds the resilience chain.
func (h *harness) dialer(chain map[string]grpc.UnaryClientInterceptor) DialFunc {
	return func(ctx context.Context, up config.UpstreamConfig) (*grpc.ClientConn, error) {
		var extra []grpc.DialOption
		if ic, ok := chain[up.Name]; ok {
			extra = append(extra, grpc.WithChainUnaryInterceptor(ic))
		}
		return Dial(ctx, up, extra...)
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// response is a finished HTTP exchange.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

// do sends one request; header is "Name: value" pairs.
func (h *harness) do(method, path, token, body string, header ...string) response {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, h.http.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, kv := range header {
		k, v, _ := strings.Cut(kv, ": ")
		if k == "Content-Type" {
			req.Header.Del(k)
		}
		req.Header.Add(k, v)
	}
	resp, err := h.http.Client().Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct{ testproc.Buffer }

// lines returns the JSON log lines whose msg is msg.
func (b *syncBuffer) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
