package grpcserver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/logging"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type panicky struct {
	inventoryv1.UnimplementedInventoryServiceServer
}

func (panicky) GetItem(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	panic("boom")
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// start serves a Server on bufconn and returns a client conn and a stop
// func that cancels Serve and waits for it.
func start(t *testing.T, cfg Config) (*grpc.ClientConn, func() error) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	inventoryv1.RegisterInventoryServiceServer(s.GRPC(), panicky{})
	lis := bufconn.Listen(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, lis) }()
	cc, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
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

func TestPanicBecomesInternal(t *testing.T) {
	logs := &syncBuf{}
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

func TestHealthFollowsReadyAndShutdown(t *testing.T) {
	var broken atomic.Bool
	ready := func(context.Context) error {
		if broken.Load() {
			return errors.New("db gone")
		}
		return nil
	}
	cc, stop := start(t, Config{Service: "svc", Logger: slog.New(slog.DiscardHandler), Ready: ready, ReadyInterval: 10 * time.Millisecond})
	h := healthpb.NewHealthClient(cc)
	check := func() healthpb.HealthCheckResponse_ServingStatus {
		r, err := h.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "svc"})
		if err != nil {
			return healthpb.HealthCheckResponse_UNKNOWN
		}
		return r.GetStatus()
	}
	waitStatus := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for check() != want {
			if time.Now().After(deadline) {
				t.Fatalf("health never became %v", want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitStatus(healthpb.HealthCheckResponse_SERVING)
	broken.Store(true)
	waitStatus(healthpb.HealthCheckResponse_NOT_SERVING)
	broken.Store(false)
	waitStatus(healthpb.HealthCheckResponse_SERVING)
	if err := stop(); err != nil {
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

func TestBackgroundStopsBeforeServeReturns(t *testing.T) {
	started := make(chan struct{})
	var stopped atomic.Bool
	bg := func(ctx context.Context) {
		close(started)
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // a slow exit Serve must wait for
		stopped.Store(true)
	}
	_, stop := start(t, Config{Service: "svc", Logger: slog.New(slog.DiscardHandler), Background: []func(context.Context){bg}})
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("background work never started")
	}
	if err := stop(); err != nil {
		t.Fatalf("Serve() = %v", err)
	}
	if !stopped.Load() {
		t.Error("Serve returned before its background work stopped")
	}
}
