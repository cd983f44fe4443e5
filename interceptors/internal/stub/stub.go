// Package stub serves Portico's inventory and order services over bufconn
// for the interceptors' tests: each RPC calls a function field, so a test
// says what the upstream does in one line.
//
// A Network holds any number of in-memory servers by address; its dialer
// reports the dialled address as the peer, as TCP would, so per-instance
// ejection can be tested without ports.
package stub

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// Inventory is an InventoryService; nil fields answer UNIMPLEMENTED.
type Inventory struct {
	inventoryv1.UnimplementedInventoryServiceServer
	GetItemFunc    func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error)
	CreateItemFunc func(context.Context, *inventoryv1.CreateItemRequest) (*inventoryv1.Item, error)
}

// GetItem calls GetItemFunc.
func (s *Inventory) GetItem(ctx context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	if s.GetItemFunc == nil {
		return nil, status.Error(codes.Unimplemented, "stub: GetItem")
	}
	return s.GetItemFunc(ctx, r)
}

// CreateItem calls CreateItemFunc.
func (s *Inventory) CreateItem(ctx context.Context, r *inventoryv1.CreateItemRequest) (*inventoryv1.Item, error) {
	if s.CreateItemFunc == nil {
		return nil, status.Error(codes.Unimplemented, "stub: CreateItem")
	}
	return s.CreateItemFunc(ctx, r)
}

// Order is an OrderService; nil fields answer UNIMPLEMENTED.
type Order struct {
	orderv1.UnimplementedOrderServiceServer
	CreateOrderFunc func(context.Context, *orderv1.CreateOrderRequest) (*orderv1.Order, error)
	WatchOrderFunc  func(*orderv1.WatchOrderRequest, orderv1.OrderService_WatchOrderServer) error
}

// WatchOrder calls WatchOrderFunc.
func (s *Order) WatchOrder(r *orderv1.WatchOrderRequest, st orderv1.OrderService_WatchOrderServer) error {
	if s.WatchOrderFunc == nil {
		return status.Error(codes.Unimplemented, "stub: WatchOrder")
	}
	return s.WatchOrderFunc(r, st)
}

// CreateOrder calls CreateOrderFunc.
func (s *Order) CreateOrder(ctx context.Context, r *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
	if s.CreateOrderFunc == nil {
		return nil, status.Error(codes.Unimplemented, "stub: CreateOrder")
	}
	return s.CreateOrderFunc(ctx, r)
}

// Network is a set of in-memory servers, by address.
type Network struct {
	mu        sync.Mutex
	listeners map[string]*bufconn.Listener
}

// NewNetwork returns an empty Network.
func NewNetwork() *Network { return &Network{listeners: map[string]*bufconn.Listener{}} }

// Serve starts a server at addr with the given services (nil ones are not
// registered) and grpc.health.v1, all SERVING, and stops it when the test
// ends. It returns the health server so a test can mark services down.
func (n *Network) Serve(t testing.TB, addr string, inv *Inventory, ord *Order, opts ...grpc.ServerOption) *health.Server {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(opts...)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	if inv != nil {
		inventoryv1.RegisterInventoryServiceServer(srv, inv)
	}
	if ord != nil {
		orderv1.RegisterOrderServiceServer(srv, ord)
	}
	n.mu.Lock()
	n.listeners[addr] = lis
	n.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		hs.Shutdown()
		srv.Stop()
		<-done
	})
	return hs
}

// DialOption dials the Network's servers.
func (n *Network) DialOption() grpc.DialOption {
	return grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		n.mu.Lock()
		lis, ok := n.listeners[addr]
		n.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("stub: nothing serves %q", addr)
		}
		c, err := lis.DialContext(ctx)
		if err != nil {
			return nil, err
		}
		return conn{c, fakeAddr(addr)}, nil
	})
}

// conn reports the dialled address as its remote address.
type conn struct {
	net.Conn
	remote fakeAddr
}

func (c conn) RemoteAddr() net.Addr { return c.remote }

type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }

// Serve is a shortcut for one server at "bufnet": it returns the target and
// dial option to reach it.
func Serve(t testing.TB, inv *Inventory, ord *Order, opts ...grpc.ServerOption) (target string, dial grpc.DialOption) {
	n := NewNetwork()
	n.Serve(t, "bufnet", inv, ord, opts...)
	return "passthrough:///bufnet", n.DialOption()
}
