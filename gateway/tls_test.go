package gateway

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/tlsconfig"
	"github.com/portico-gateway/portico/internal/tlsconfig/tlstest"
)

// TestEdgeTLS: with a tls section the edge serves HTTPS, HTTP/2 by ALPN,
// TLS 1.2 at least; a renewed pair is served after ReloadTLS (SIGHUP)
// without a restart.
func TestEdgeTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "edge")
	cert, key := ca.Issue(t, "edge", "127.0.0.1")
	h := newHarness(t, setup{cfg: func(c *config.Config) { c.TLS = config.TLSConfig{CertFile: cert, KeyFile: key} }})
	srv, err := New(context.Background(), h.cfg, WithDialer(h.dial), WithLogger(discardLogger()))
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
	defer func() { cancel(); <-served }()

	clientTLS, _ := tlsconfig.Client(ca.File, "", "", "")
	get := func() *http.Response {
		t.Helper()
		tr := &http.Transport{TLSClientConfig: clientTLS.Clone(), ForceAttemptHTTP2: true}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		r, err := c.Get("https://" + lis.Addr().String() + "/healthz/live")
		if err != nil {
			t.Fatalf("GET over TLS: %v", err)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return r
	}
	r := get()
	if r.StatusCode != 200 || r.ProtoMajor != 2 || r.TLS == nil || r.TLS.Version < tls.VersionTLS12 {
		t.Fatalf("GET /healthz/live = %d %s, TLS %v; want 200 over HTTP/2 and TLS 1.2+", r.StatusCode, r.Proto, r.TLS)
	}
	first := r.TLS.PeerCertificates[0].SerialNumber

	plain, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + lis.Addr().String() + "/healthz/live")
	if err == nil && plain.StatusCode == 200 {
		t.Error("plaintext HTTP answered 200 on the TLS listener")
	}
	if plain != nil {
		plain.Body.Close()
	}

	ca.Issue(t, "edge", "127.0.0.1") // renewed on disk
	if err := srv.ReloadTLS(); err != nil {
		t.Fatal(err)
	}
	if r := get(); r.TLS.PeerCertificates[0].SerialNumber.Cmp(first) == 0 {
		t.Error("after ReloadTLS the edge still serves the old certificate")
	}
}

// TestUpstreamTLS: an upstream with a tls section is dialled over mTLS,
// API calls and /health alike; the same upstream without a client pair
// fails the handshake.
func TestUpstreamTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "up")
	scert, skey := ca.Issue(t, "upstream", "127.0.0.1")
	ccert, ckey := ca.Issue(t, "edge-client")
	srvTLS, _, err := tlsconfig.Server(scert, skey, ca.File)
	if err != nil {
		t.Fatal(err)
	}
	tlsUp := func(c *config.Config) {
		for i := range c.Upstreams {
			c.Upstreams[i].TLS = config.UpstreamTLSConfig{CAFile: ca.File, CertFile: ccert, KeyFile: ckey}
		}
	}
	h := newHarness(t, setup{cfg: tlsUp, srvOpts: []grpc.ServerOption{grpc.Creds(credentials.NewTLS(srvTLS))}})
	h.inv.getItem = func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		return &inventoryv1.Item{Sku: "keyboard-001"}, nil
	}
	if r := h.do("GET", "/api/inventory/keyboard-001", "demo-read-token", ""); r.status != 200 {
		t.Fatalf("GET over mTLS = %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/health", "", ""); r.status != 200 {
		t.Fatalf("/health over mTLS = %d %s", r.status, r.body)
	}
	noClientCert := newHarness(t, setup{cfg: func(c *config.Config) {
		for i := range c.Upstreams {
			c.Upstreams[i].TLS = config.UpstreamTLSConfig{CAFile: ca.File}
		}
	}, srvOpts: []grpc.ServerOption{grpc.Creds(credentials.NewTLS(srvTLS))}})
	if r := noClientCert.do("GET", "/api/inventory/keyboard-001", "demo-read-token", ""); r.status < 500 {
		t.Fatalf("GET without a client certificate = %d, want a 5xx", r.status)
	}
}

// TestUpstreamServerNameTurnsTLSOn: an upstream whose tls section sets
// only server_name is dialled over TLS (system CAs), never in plaintext:
// a plaintext upstream cannot answer it.
func TestUpstreamServerNameTurnsTLSOn(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		for i := range c.Upstreams {
			c.Upstreams[i].TLS = config.UpstreamTLSConfig{ServerName: "inventory.internal"}
		}
	}})
	h.inv.getItem = func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		return &inventoryv1.Item{Sku: "keyboard-001"}, nil
	}
	if r := h.do("GET", "/api/inventory/keyboard-001", "demo-read-token", ""); r.status < 500 {
		t.Fatalf("GET of a plaintext upstream with tls.server_name set = %d %s, want a 5xx (TLS on)", r.status, r.body)
	}
}
