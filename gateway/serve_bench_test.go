package gateway

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkServeKeepAlive is one GET /healthz/live on a kept-alive
// cleartext connection to the edge's real listener: what a connection
// wrapper (malformed.go) would add to every request shows here.
func BenchmarkServeKeepAlive(b *testing.B) {
	h := newHarness(b, setup{})
	srv, err := New(context.Background(), h.cfg, WithDialer(h.dial), WithLogger(discardLogger()), WithRegistry(prometheus.NewRegistry()))
	if err != nil {
		b.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, lis) }()
	b.Cleanup(func() { cancel(); <-served })
	c, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	const req = "GET /healthz/live HTTP/1.1\r\nHost: edge\r\n\r\n"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.WriteString(c, req); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
