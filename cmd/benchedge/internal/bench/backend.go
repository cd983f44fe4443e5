package bench

import (
	"context"
	"flag"
	"io"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// backend is the trivial in-memory InventoryService every system under
// test forwards to: GetItem answers one fixed item, so the figures measure
// the layer in front of it, not a store.
type backend struct {
	inventoryv1.UnimplementedInventoryServiceServer
	items map[string]*inventoryv1.Item
}

func newBackend() *backend {
	at := timestamppb.New(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	return &backend{items: map[string]*inventoryv1.Item{
		benchSKU: {Sku: benchSKU, Name: "Mechanical Keyboard", UnitPrice: &typev1.Money{AmountMinor: 4999, Currency: "USD"},
			Available: 100, UpdateTime: at},
	}}
}

// benchSKU is the item every benchmark request asks for.
const benchSKU = "keyboard-001"

// holdSKU prefixes the SKUs whose GetItem answers only when the caller
// gives up: the overload benchmark fills the edge's cap with them.
const holdSKU = "hold-"

func (b *backend) GetItem(ctx context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	if it, ok := b.items[r.GetSku()]; ok {
		return it, nil
	}
	if strings.HasPrefix(r.GetSku(), holdSKU) { // holds an edge slot until the caller gives up
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return nil, status.Error(codes.NotFound, "no such item")
}

// orders is the trivial OrderService beside it: CreateOrder answers one
// confirmed order built from the request, for the CreateOrder figures.
type orders struct {
	orderv1.UnimplementedOrderServiceServer
}

func (orders) CreateOrder(_ context.Context, r *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
	return &orderv1.Order{Id: "ord-bench-1", Customer: "alice", Lines: r.GetLines(),
		Total: &typev1.Money{AmountMinor: 9998, Currency: "USD"}, Status: orderv1.Order_STATUS_CONFIRMED}, nil
}

// serveBackend is `benchedge backend -listen ADDR`: it serves until ctx
// ends.
func serveBackend(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("backend", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "gRPC listen `ADDR`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	s := grpc.NewServer()
	inventoryv1.RegisterInventoryServiceServer(s, newBackend())
	orderv1.RegisterOrderServiceServer(s, orders{})
	hs := health.NewServer() // the edge's client health-checks the services by name
	hs.SetServingStatus(inventoryv1.InventoryService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(orderv1.OrderService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	go func() { <-ctx.Done(); s.Stop() }()
	return s.Serve(lis)
}
