package inflight_test

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"

	"github.com/portico-gateway/portico/gateway/inflight"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// holdingHealth answers Check only once release is closed, after telling
// entered.
type holdingHealth struct {
	healthpb.UnimplementedHealthServer
	entered chan struct{}
	release chan struct{}
}

func (h *holdingHealth) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	h.entered <- struct{}{}
	select {
	case <-h.release:
	case <-ctx.Done():
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func serve(t *testing.T, h healthpb.HealthServer) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, h)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return l.Addr().String()
}

func dial(t *testing.T, target string, c *inflight.Counter) healthpb.HealthClient {
	t.Helper()
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithStatsHandler(c))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return healthpb.NewHealthClient(cc)
}

func inFlight(t *testing.T, c *inflight.Counter, addr string) int64 {
	t.Helper()
	n, ok := c.InFlight(addr)
	if !ok {
		t.Fatalf("InFlight(%q) ok = false", addr)
	}
	return n
}

// TestCountsHeldCall: a call held by the server counts 1 on that address
// while it runs and 0 once it returned; the other address counts nothing.
func TestCountsHeldCall(t *testing.T) {
	h := &holdingHealth{entered: make(chan struct{}), release: make(chan struct{})}
	addr := serve(t, h)
	other := serve(t, &holdingHealth{})
	c := inflight.New()
	client := dial(t, addr, c)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		done <- err
	}()
	select {
	case <-h.entered:
	case <-ctx.Done():
		t.Fatal("the call never reached the server")
	}
	if got := inFlight(t, c, addr); got != 1 {
		t.Errorf("InFlight(%s) with a held call = %d, want 1", addr, got)
	}
	if got := inFlight(t, c, other); got != 0 {
		t.Errorf("InFlight(%s) of an unused address = %d, want 0", other, got)
	}
	close(h.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := inFlight(t, c, addr); got != 0 {
		t.Errorf("InFlight(%s) after the call returned = %d, want 0", addr, got)
	}
}

// TestRefusedCallNotCounted: an attempt that never opened a stream (nothing
// listens) leaves no count behind.
func TestRefusedCallNotCounted(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := inflight.New()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := dial(t, addr, c).Check(ctx, &healthpb.HealthCheckRequest{}); err == nil {
		t.Fatal("Check to a closed port succeeded")
	}
	if got := inFlight(t, c, addr); got != 0 {
		t.Errorf("InFlight(%s) after a refused call = %d, want 0", addr, got)
	}
}

func TestInFlightNeedsIPPort(t *testing.T) {
	for _, addr := range []string{"inventory:43101", "dns:///x:1", ""} {
		if _, ok := inflight.New().InFlight(addr); ok {
			t.Errorf("InFlight(%q) ok = true, want false", addr)
		}
	}
}

// BenchmarkHandleRPC is the counter's cost per call attempt on a known
// address: the OutHeader and End events (the others only pass the type
// switch).
func BenchmarkHandleRPC(b *testing.B) {
	c := inflight.New()
	remote := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 43101}
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: remote})
	out := &stats.OutHeader{Client: true, RemoteAddr: remote}
	end := &stats.End{Client: true}
	in := &stats.InPayload{Client: true}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.HandleRPC(ctx, out)
			c.HandleRPC(ctx, in)
			c.HandleRPC(ctx, end)
		}
	})
}
