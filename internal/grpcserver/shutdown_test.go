package grpcserver

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors/identity"
)

// held answers GetItem once release closes, telling called first.
type held struct {
	inventoryv1.UnimplementedInventoryServiceServer
	called, release chan struct{}
}

func (h held) GetItem(_ context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	close(h.called)
	<-h.release
	return &inventoryv1.Item{Sku: r.GetSku()}, nil
}

// TestShutdownLetsInFlightCallsFinish: at shutdown health turns
// NOT_SERVING for watchers, a call in flight completes OK, an open health
// Watch (every health-checking client holds one) does not hold the stop
// for the grace, and a call after the stop is refused cleanly
// (UNAVAILABLE), never cut halfway.
func TestShutdownLetsInFlightCallsFinish(t *testing.T) {
	keys, err := identity.NewKeys(identity.GenerateKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	verifier, _ := identity.NewVerifier(keys, "portico.inventory.v1.InventoryService")
	minter, _ := identity.NewMinter(keys, identity.WithService("test"))
	s, err := New(Config{Service: "svc", Logger: slog.New(slog.DiscardHandler), ShutdownGrace: time.Minute, Identity: verifier})
	if err != nil {
		t.Fatal(err)
	}
	h := held{called: make(chan struct{}), release: make(chan struct{})}
	inventoryv1.RegisterInventoryServiceServer(s.GRPC(), h)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	ctx, stopServe := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, lis) }()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(identity.UnaryClientInterceptor(minter)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	wctx, cancelWatch := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelWatch()
	watch, err := healthpb.NewHealthClient(cc).Watch(wctx, &healthpb.HealthCheckRequest{Service: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := watch.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health before shutdown = %v, %v; want SERVING", r.GetStatus(), err)
	}
	inflight := make(chan error, 1)
	go func() {
		_, err := inventoryv1.NewInventoryServiceClient(cc).GetItem(wctx, &inventoryv1.GetItemRequest{Sku: "a"})
		inflight <- err
	}()
	select {
	case <-h.called:
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reached the handler")
	}
	stopServe() // SIGTERM
	if r, err := watch.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health after shutdown began = %v, %v; want NOT_SERVING", r.GetStatus(), err)
	}
	close(h.release)
	if err := <-inflight; err != nil {
		t.Errorf("in-flight call = %v, want OK", err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve() = %v, want nil", err)
		}
	case <-time.After(10 * time.Second): // the grace is a minute: only a held stop gets here
		t.Fatal("Serve did not return: an open health Watch holds GracefulStop")
	}
	late, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	_, err = inventoryv1.NewInventoryServiceClient(late).GetItem(wctx, &inventoryv1.GetItemRequest{Sku: "b"})
	if status.Code(err) != codes.Unavailable {
		t.Errorf("call after the stop = %v, want UNAVAILABLE (refused)", err)
	}
}
