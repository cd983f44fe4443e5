package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	shippingv1 "example.com/shipping/gen/acme/shipping/v1"
)

// service keeps shipments in memory.
type service struct {
	shippingv1.UnimplementedShippingServiceServer
	mu        sync.Mutex
	shipments []*shippingv1.Shipment // oldest first
}

func newService() *service { return &service{} }

var postalCode = regexp.MustCompile(`^[0-9]{5}$`)

// invalid is INVALID_ARGUMENT with a BadRequest naming the field, which
// Portico answers as a 400 problem naming it.
func invalid(field, why string) error {
	st, _ := status.New(codes.InvalidArgument, field+": "+why).WithDetails(&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: why}},
	})
	return st.Err()
}

func (s *service) CreateShipment(_ context.Context, r *shippingv1.CreateShipmentRequest) (*shippingv1.Shipment, error) {
	in := r.GetShipment()
	switch {
	case in == nil:
		return nil, invalid("shipment", "is required")
	case in.GetOrderId() == "":
		return nil, invalid("shipment.order_id", "is required")
	case !postalCode.MatchString(in.GetPostalCode()):
		return nil, invalid("shipment.postal_code", "must be 5 digits")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.shipments, func(x *shippingv1.Shipment) bool { return x.GetOrderId() == in.GetOrderId() }) {
		return nil, status.Errorf(codes.AlreadyExists, "order %s has a shipment already", in.GetOrderId())
	}
	sh := proto.CloneOf(in)
	sh.Id, sh.State, sh.Carrier = fmt.Sprintf("shp-%d", len(s.shipments)+1), shippingv1.Shipment_STATE_BOOKED, ""
	s.shipments = append(s.shipments, sh)
	return proto.CloneOf(sh), nil
}

func (s *service) find(id, orderID string) (*shippingv1.Shipment, error) {
	for _, x := range s.shipments {
		if id != "" && x.GetId() == id || id == "" && orderID != "" && x.GetOrderId() == orderID {
			return x, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "no shipment %s%s", id, orderID)
}

func (s *service) GetShipment(_ context.Context, r *shippingv1.GetShipmentRequest) (*shippingv1.Shipment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, err := s.find(r.GetId(), r.GetOrderId())
	if err != nil {
		return nil, err
	}
	return proto.CloneOf(sh), nil
}

func (s *service) ListShipments(_ context.Context, r *shippingv1.ListShipmentsRequest) (*shippingv1.ListShipmentsResponse, error) {
	n := int(r.GetPageSize())
	if n < 0 || n > 100 {
		return nil, invalid("page_size", "must be 0 to 100")
	}
	if n == 0 {
		n = 20
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &shippingv1.ListShipmentsResponse{}
	for i := len(s.shipments) - 1; i >= 0 && len(out.Shipments) < n; i-- {
		out.Shipments = append(out.Shipments, proto.CloneOf(s.shipments[i]))
	}
	return out, nil
}

func (s *service) DispatchShipment(_ context.Context, r *shippingv1.DispatchShipmentRequest) (*shippingv1.Shipment, error) {
	if r.GetCarrier() == "" {
		return nil, invalid("carrier", "is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, err := s.find(r.GetId(), "")
	if err != nil {
		return nil, err
	}
	if sh.GetState() != shippingv1.Shipment_STATE_BOOKED {
		return nil, status.Errorf(codes.FailedPrecondition, "shipment %s is %s", sh.GetId(), sh.GetState())
	}
	sh.State, sh.Carrier = shippingv1.Shipment_STATE_DISPATCHED, r.GetCarrier()
	return proto.CloneOf(sh), nil
}
