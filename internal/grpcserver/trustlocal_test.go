package grpcserver

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// hostAddr is one of this host's non-loopback IPv4 addresses, or "".
func hostAddr(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

// TestTrustMetadataOverTCP: a service without keys, listening on every
// address, trusts a caller that reaches it over loopback (the handler
// runs: it panics, INTERNAL) and refuses one that reaches it over another
// address UNAUTHENTICATED, while health answers both.
func TestTrustMetadataOverTCP(t *testing.T) {
	s, err := New(Config{Service: "svc", Logger: slog.New(slog.DiscardHandler), TrustMetadata: true})
	if err != nil {
		t.Fatal(err)
	}
	inventoryv1.RegisterInventoryServiceServer(s.GRPC(), panicky{})
	lis, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(lis.Addr().(*net.TCPAddr).Port)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-errc:
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return")
		}
	})
	tests := []struct {
		name string
		host string
		want codes.Code
	}{
		{"loopback", "127.0.0.1", codes.Internal},
		{"host address", hostAddr(t), codes.Unauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.host == "" {
				t.Skip("this host has no non-loopback IPv4 address")
			}
			cc, err := grpc.NewClient(net.JoinHostPort(tt.host, port), grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer ccancel()
			_, err = inventoryv1.NewInventoryServiceClient(cc).GetItem(cctx, &inventoryv1.GetItemRequest{Sku: "x"})
			if status.Code(err) != tt.want {
				t.Errorf("GetItem() = %v, want %v", err, tt.want)
			}
			if _, err := healthpb.NewHealthClient(cc).Check(cctx, &healthpb.HealthCheckRequest{}); err != nil {
				t.Errorf("health Check() = %v, want an answer", err)
			}
		})
	}
}
