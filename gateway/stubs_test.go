package gateway

import (
	"context"
	"sync"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// seen records the incoming metadata of the last call a stub served.
type seen struct {
	mu sync.Mutex
	md metadata.MD
	n  int
}

func (s *seen) record(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	s.md, s.n = md.Copy(), s.n+1
	s.mu.Unlock()
}

func (s *seen) last() (metadata.MD, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.md, s.n
}

// orderStub is an OrderService with a func field per RPC; a nil func is
// UNIMPLEMENTED.
type orderStub struct {
	orderv1.UnimplementedOrderServiceServer
	seen
	createOrder func(context.Context, *orderv1.CreateOrderRequest) (*orderv1.Order, error)
	getOrder    func(context.Context, *orderv1.GetOrderRequest) (*orderv1.Order, error)
	listOrders  func(context.Context, *orderv1.ListOrdersRequest) (*orderv1.ListOrdersResponse, error)
	cancelOrder func(context.Context, *orderv1.CancelOrderRequest) (*orderv1.Order, error)
	// watchOrder and exportOrders serve the streams; nil is UNIMPLEMENTED.
	watchOrder   func(*orderv1.WatchOrderRequest, grpc.ServerStreamingServer[orderv1.Order]) error
	exportOrders func(*orderv1.ExportOrdersRequest, grpc.ServerStreamingServer[httpbody.HttpBody]) error
}

func (s *orderStub) WatchOrder(r *orderv1.WatchOrderRequest, st grpc.ServerStreamingServer[orderv1.Order]) error {
	s.record(st.Context())
	if s.watchOrder == nil {
		return s.UnimplementedOrderServiceServer.WatchOrder(r, st)
	}
	return s.watchOrder(r, st)
}

func (s *orderStub) ExportOrders(r *orderv1.ExportOrdersRequest, st grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	s.record(st.Context())
	if s.exportOrders == nil {
		return s.UnimplementedOrderServiceServer.ExportOrders(r, st)
	}
	return s.exportOrders(r, st)
}

func call[Req, Resp any](s *seen, ctx context.Context, f func(context.Context, Req) (Resp, error), req Req, unimpl func(context.Context, Req) (Resp, error)) (Resp, error) {
	s.record(ctx)
	if f == nil {
		return unimpl(ctx, req)
	}
	return f(ctx, req)
}

func (s *orderStub) CreateOrder(ctx context.Context, r *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
	return call(&s.seen, ctx, s.createOrder, r, s.UnimplementedOrderServiceServer.CreateOrder)
}

func (s *orderStub) GetOrder(ctx context.Context, r *orderv1.GetOrderRequest) (*orderv1.Order, error) {
	return call(&s.seen, ctx, s.getOrder, r, s.UnimplementedOrderServiceServer.GetOrder)
}

func (s *orderStub) ListOrders(ctx context.Context, r *orderv1.ListOrdersRequest) (*orderv1.ListOrdersResponse, error) {
	return call(&s.seen, ctx, s.listOrders, r, s.UnimplementedOrderServiceServer.ListOrders)
}

func (s *orderStub) CancelOrder(ctx context.Context, r *orderv1.CancelOrderRequest) (*orderv1.Order, error) {
	return call(&s.seen, ctx, s.cancelOrder, r, s.UnimplementedOrderServiceServer.CancelOrder)
}

// inventoryStub is an InventoryService with a func field per RPC.
type inventoryStub struct {
	inventoryv1.UnimplementedInventoryServiceServer
	seen
	getItem            func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error)
	listItems          func(context.Context, *inventoryv1.ListItemsRequest) (*inventoryv1.ListItemsResponse, error)
	createItem         func(context.Context, *inventoryv1.CreateItemRequest) (*inventoryv1.Item, error)
	updateItem         func(context.Context, *inventoryv1.UpdateItemRequest) (*inventoryv1.Item, error)
	reserveStock       func(context.Context, *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error)
	getReservation     func(context.Context, *inventoryv1.GetReservationRequest) (*inventoryv1.Reservation, error)
	commitReservation  func(context.Context, *inventoryv1.CommitReservationRequest) (*inventoryv1.Reservation, error)
	releaseReservation func(context.Context, *inventoryv1.ReleaseReservationRequest) (*inventoryv1.Reservation, error)
}

func (s *inventoryStub) GetItem(ctx context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	return call(&s.seen, ctx, s.getItem, r, s.UnimplementedInventoryServiceServer.GetItem)
}

func (s *inventoryStub) ListItems(ctx context.Context, r *inventoryv1.ListItemsRequest) (*inventoryv1.ListItemsResponse, error) {
	return call(&s.seen, ctx, s.listItems, r, s.UnimplementedInventoryServiceServer.ListItems)
}

func (s *inventoryStub) CreateItem(ctx context.Context, r *inventoryv1.CreateItemRequest) (*inventoryv1.Item, error) {
	return call(&s.seen, ctx, s.createItem, r, s.UnimplementedInventoryServiceServer.CreateItem)
}

func (s *inventoryStub) UpdateItem(ctx context.Context, r *inventoryv1.UpdateItemRequest) (*inventoryv1.Item, error) {
	return call(&s.seen, ctx, s.updateItem, r, s.UnimplementedInventoryServiceServer.UpdateItem)
}

func (s *inventoryStub) ReserveStock(ctx context.Context, r *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
	return call(&s.seen, ctx, s.reserveStock, r, s.UnimplementedInventoryServiceServer.ReserveStock)
}

func (s *inventoryStub) GetReservation(ctx context.Context, r *inventoryv1.GetReservationRequest) (*inventoryv1.Reservation, error) {
	return call(&s.seen, ctx, s.getReservation, r, s.UnimplementedInventoryServiceServer.GetReservation)
}

func (s *inventoryStub) CommitReservation(ctx context.Context, r *inventoryv1.CommitReservationRequest) (*inventoryv1.Reservation, error) {
	return call(&s.seen, ctx, s.commitReservation, r, s.UnimplementedInventoryServiceServer.CommitReservation)
}

func (s *inventoryStub) ReleaseReservation(ctx context.Context, r *inventoryv1.ReleaseReservationRequest) (*inventoryv1.Reservation, error) {
	return call(&s.seen, ctx, s.releaseReservation, r, s.UnimplementedInventoryServiceServer.ReleaseReservation)
}

// paymentStub is a PaymentService with a func field per RPC.
type paymentStub struct {
	paymentv1.UnimplementedPaymentServiceServer
	seen
	createPayment func(context.Context, *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error)
	getPayment    func(context.Context, *paymentv1.GetPaymentRequest) (*paymentv1.Payment, error)
	listPayments  func(context.Context, *paymentv1.ListPaymentsRequest) (*paymentv1.ListPaymentsResponse, error)
	refundPayment func(context.Context, *paymentv1.RefundPaymentRequest) (*paymentv1.Payment, error)
}

func (s *paymentStub) CreatePayment(ctx context.Context, r *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
	return call(&s.seen, ctx, s.createPayment, r, s.UnimplementedPaymentServiceServer.CreatePayment)
}

func (s *paymentStub) GetPayment(ctx context.Context, r *paymentv1.GetPaymentRequest) (*paymentv1.Payment, error) {
	return call(&s.seen, ctx, s.getPayment, r, s.UnimplementedPaymentServiceServer.GetPayment)
}

func (s *paymentStub) ListPayments(ctx context.Context, r *paymentv1.ListPaymentsRequest) (*paymentv1.ListPaymentsResponse, error) {
	return call(&s.seen, ctx, s.listPayments, r, s.UnimplementedPaymentServiceServer.ListPayments)
}

func (s *paymentStub) RefundPayment(ctx context.Context, r *paymentv1.RefundPaymentRequest) (*paymentv1.Payment, error) {
	return call(&s.seen, ctx, s.refundPayment, r, s.UnimplementedPaymentServiceServer.RefundPayment)
}
