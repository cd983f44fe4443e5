package gateway_test

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// catalogue is a one-item inventory service.
type catalogue struct {
	inventoryv1.UnimplementedInventoryServiceServer
}

func (catalogue) GetItem(_ context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	return &inventoryv1.Item{Sku: r.GetSku(), Name: "Desk Pad"}, nil
}

// A Go program embeds the edge with exported packages only (no internal/
// import: TestEmbedExampleImports): here in front of one inventory
// service, the only upstream of its config. /health follows that upstream;
// the other compiled-in services are not served (404).
func Example_embed() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	up := grpc.NewServer()
	inventoryv1.RegisterInventoryServiceServer(up, catalogue{})
	healthpb.RegisterHealthServer(up, health.NewServer())
	go func() { _ = up.Serve(lis) }()
	defer up.Stop()

	cfg := config.Dev(0)
	cfg.AdminListen, cfg.Ops.ReadyRequires = "", nil
	cfg.Limits = config.LimitsConfig{} // the dev limit groups name order routes
	cfg.Upstreams = []config.UpstreamConfig{{Name: "inventory", Addresses: []string{lis.Addr().String()}}}
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	reg := prometheus.NewRegistry()
	tp, err := gateway.NewTelemetry(ctx, cfg)
	if err != nil {
		panic(err)
	}
	defer func() { _ = tp.Shutdown(ctx) }()
	ups, err := gateway.ObservedUpstreams(log, reg, tp, cfg)
	if err != nil {
		panic(err)
	}
	srv, err := gateway.New(ctx, cfg, gateway.WithLogger(log), gateway.WithRegistry(reg),
		gateway.WithTelemetry(tp), gateway.WithUpstreams(ups))
	if err != nil {
		panic(err)
	}
	defer func() { _ = srv.Close() }()
	edge := httptest.NewServer(srv.Handler())
	defer edge.Close()

	for _, path := range []string{"/health", "/api/inventory/pad-001", "/api/orders/ord-1"} {
		req, _ := http.NewRequest("GET", edge.URL+path, nil)
		req.Header.Set("Authorization", "Bearer demo-admin-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		_ = resp.Body.Close()
		fmt.Println(path, resp.StatusCode)
	}
	// Output:
	// /health 200
	// /api/inventory/pad-001 200
	// /api/orders/ord-1 404
}

// TestEmbedExampleImports: Example_embed uses exported packages only, as
// a program in another module must.
func TestEmbedExampleImports(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "embed_example_test.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if strings.Contains(imp.Path.Value, "/internal/") || strings.HasSuffix(strings.Trim(imp.Path.Value, `"`), "/internal") {
			t.Errorf("Example_embed imports %s", imp.Path.Value)
		}
	}
}
