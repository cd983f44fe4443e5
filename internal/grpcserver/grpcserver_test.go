package grpcserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/testproc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type panicky struct {
	inventoryv1.UnimplementedInventoryServiceServer
}

func (panicky) GetItem(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	panic("boom")
}

// start serves a Server on bufconn and returns a client conn and a stop
// func that cancels Serve and waits for it. The conn calls as a service
// with a valid identity, unless opts replace its interceptors.
func start(t *testing.T, cfg Config, opts ...grpc.DialOption) (*grpc.ClientConn, func() error) {
	t.Helper()
	keys, err := identity.NewKeys(identity.GenerateKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	minter, _ := identity.NewMinter(keys, identity.WithService("test"))
	if cfg.Identity == nil && !cfg.TrustMetadata {
		cfg.Identity, _ = identity.NewVerifier(keys, "portico.inventory.v1.InventoryService")
	}
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithChainUnaryInterceptor(identity.UnaryClientInterceptor(minter))}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	inventoryv1.RegisterInventoryServiceServer(s.GRPC(), panicky{})
	lis := bufconn.Listen(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, lis) }()
	cc, err := grpc.NewClient("passthrough:///bufnet", append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var serveErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case serveErr = <-errc:
			case <-time.After(5 * time.Second):
				serveErr = errors.New("Serve did not return")
			}
			cc.Close()
		})
		return serveErr
	}
	t.Cleanup(func() { _ = stop() })
	return cc, stop
}

// TestTrustMetadata: a server without a verifier refuses a call without an
// assertion, unless TrustMetadata says to trust the caller as before
// identity keys (the handler, which panics, is then reached: INTERNAL).
func TestTrustMetadata(t *testing.T) {
	plain := grpc.WithUserAgent("no-identity") // any option: no minter
	for _, tt := range []struct {
		name  string
		trust bool
		want  codes.Code
	}{{"refused", false, codes.Unauthenticated}, {"trusted", true, codes.Internal}} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Service: "svc", Logger: slog.New(slog.DiscardHandler), TrustMetadata: tt.trust}
			if !tt.trust {
				keys, _ := identity.NewKeys(identity.GenerateKey("k2"))
				cfg.Identity, _ = identity.NewVerifier(keys, "portico.inventory.v1.InventoryService")
			}
			cc, _ := start(t, cfg, plain)
			_, err := inventoryv1.NewInventoryServiceClient(cc).GetItem(context.Background(), &inventoryv1.GetItemRequest{Sku: "x"})
			if status.Code(err) != tt.want {
				t.Errorf("GetItem() = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestPanicBecomesInternal(t *testing.T) {
	logs := &testproc.Buffer{}
	cc, _ := start(t, Config{Service: "svc", Logger: logging.New(logs, "test", slog.LevelInfo)})
	c := inventoryv1.NewInventoryServiceClient(cc)
	for range 2 { // the server survives the first panic
		_, err := c.GetItem(context.Background(), &inventoryv1.GetItemRequest{Sku: "x"})
		if status.Code(err) != codes.Internal {
			t.Fatalf("GetItem() = %v, want INTERNAL", err)
		}
		if strings.Contains(err.Error(), "boom") {
			t.Errorf("panic value leaked to the client: %v", err)
		}
	}
	if !strings.Contains(logs.String(), `"panic":"boom"`) {
		t.Errorf("panic not logged: %s", logs.String())
	}
	if !strings.Contains(logs.String(), `"path":"/portico.inventory.v1.InventoryService/GetItem"`) || !strings.Contains(logs.String(), `"traceId"`) {
		t.Errorf("access line lacks method or traceId: %s", logs.String())
	}
}

// TestRefusesUnverifiedCallers: the chain New installs refuses a call
// with forged principal metadata and no assertion (and every call, when
// the server has no keys), while health stays open.
func TestRefusesUnverifiedCallers(t *testing.T) {
	forged := metadata.AppendToOutgoingContext(context.Background(), callmeta.SubjectKey, "alice", callmeta.RoleKey, "admin")
	noKeys, err := New(Config{Service: "svc", Logger: slog.New(slog.DiscardHandler)})
	if err != nil || noKeys.cfg.Identity != nil {
		t.Fatalf("New() without Identity = %v, %v; want a server that verifies nothing", noKeys, err)
	}
	t.Cleanup(noKeys.GRPC().Stop) // never served: end its stream workers
	cc, _ := start(t, Config{Service: "svc", Logger: slog.New(slog.DiscardHandler)}, grpc.WithUserAgent("plain"))
	_, err = inventoryv1.NewInventoryServiceClient(cc).GetItem(forged, &inventoryv1.GetItemRequest{Sku: "x"})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("GetItem(forged metadata) = %v, want UNAUTHENTICATED", err)
	}
	if _, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("Health.Check without identity = %v, want an answer", err)
	}
}

// TestHealthFollowsReadyAndShutdown follows the health Watch stream: each
// status change is an event the test waits for, never a polled Check.
func TestHealthFollowsReadyAndShutdown(t *testing.T) {
	var broken atomic.Bool
	ready := func(context.Context) error {
		if broken.Load() {
			return errors.New("db gone")
		}
		return nil
	}
	cc, stop := start(t, Config{Service: "svc", Logger: slog.New(slog.DiscardHandler), Ready: ready, ReadyInterval: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	watch, err := healthpb.NewHealthClient(cc).Watch(ctx, &healthpb.HealthCheckRequest{Service: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	// next fails unless the next status change is want.
	next := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		r, err := watch.Recv()
		if err != nil || r.GetStatus() != want {
			t.Fatalf("health Watch = %v, %v; want %v", r.GetStatus(), err, want)
		}
	}
	next(healthpb.HealthCheckResponse_SERVING)
	broken.Store(true)
	next(healthpb.HealthCheckResponse_NOT_SERVING)
	broken.Store(false)
	next(healthpb.HealthCheckResponse_SERVING)
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	next(healthpb.HealthCheckResponse_NOT_SERVING) // shutdown has begun
	cancel()                                       // a graceful stop waits for the open Watch
	if err := <-stopped; err != nil {
		t.Errorf("Serve() after cancel = %v, want nil", err)
	}
}

func TestNewValidates(t *testing.T) {
	l := slog.New(slog.DiscardHandler)
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no service", Config{Logger: l}},
		{"no logger", Config{Service: "s"}},
		{"negative grace", Config{Service: "s", Logger: l, ShutdownGrace: -1}},
		{"negative size", Config{Service: "s", Logger: l, MaxRecvMsgSize: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil {
				t.Error("New() = nil error, want one")
			}
		})
	}
}

// TestBackgroundStopsBeforeServeReturns: once shutdown begins, Serve waits
// for background work that is slow to return. In a synctest bubble,
// synctest.Wait proves Serve is still blocked, with no sleep.
func TestBackgroundStopsBeforeServeReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cancelled, release := make(chan struct{}), make(chan struct{})
		var stopped atomic.Bool
		bg := func(ctx context.Context) {
			<-ctx.Done()
			close(cancelled)
			<-release // a slow exit Serve must wait for
			stopped.Store(true)
		}
		s, err := New(Config{Service: "svc", Logger: slog.New(slog.DiscardHandler), Background: []func(context.Context){bg}})
		if err != nil {
			t.Fatal(err)
		}
		lis := bufconn.Listen(1 << 10)
		ctx, cancel := context.WithCancel(context.Background())
		var returned atomic.Bool
		errc := make(chan error, 1)
		go func() { err := s.Serve(ctx, lis); returned.Store(true); errc <- err }()
		synctest.Wait()
		cancel()
		<-cancelled
		synctest.Wait() // every goroutine in the bubble is blocked
		early := returned.Load()
		close(release)
		if early {
			t.Fatal("Serve returned while its background work was still running")
		}
		if err := <-errc; err != nil {
			t.Fatalf("Serve() = %v", err)
		}
		if !stopped.Load() {
			t.Error("Serve returned before its background work stopped")
		}
	})
}
