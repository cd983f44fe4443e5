package testproc

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// slowListener accepts each connection late, as a process on a loaded
// machine does: the server's HTTP/2 preface arrives after that delay.
type slowListener struct {
	net.Listener
	delay time.Duration
}

func (l slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		time.Sleep(l.delay) // the slowness under test, not a wait for an event
	}
	return c, err
}

// TestDialToleratesASlowHandshake: a connection whose handshake takes
// longer than the first reconnect backoff still serves the first call.
func TestDialToleratesASlowHandshake(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	go func() { _ = s.Serve(slowListener{lis, 200 * time.Millisecond}) }()
	defer s.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(Dial(t, lis.Addr().String())).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("first Check over a slow handshake = %v, want it served", err)
	}
}
