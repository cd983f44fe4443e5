package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	shippingv1 "example.com/shipping/gen/acme/shipping/v1"
)

// service keeps shipments in memory.
type service struct {
	shippingv1.UnimplementedShippingServiceServer
	mu        sync.Mutex
	shipments []*shippingv1.Shipment // oldest first
	keys      map[string]booked      // by idempotency key
}

// booked is what an idempotency key was first used for: the request (its
// deterministic wire form) and the shipment it booked.
type booked struct {
	request []byte
	id      string
}

func newService() *service { return &service{keys: map[string]booked{}} }

// The metadata of Portico's edge option idempotency_key: the edge requires
// the Idempotency-Key header and forwards it as idempotencyKey; a service
// that replays says so with replayedKey, which the edge answers as the
// Idempotent-Replayed header.
const (
	idempotencyKey = "idempotency-key"
	replayedKey    = "x-portico-replayed"
)

var postalCode = regexp.MustCompile(`^[0-9]{5}$`)

// invalid is INVALID_ARGUMENT with a BadRequest naming the field, which
// Portico answers as a 400 problem naming it.
func invalid(field, why string) error {
	st, _ := status.New(codes.InvalidArgument, field+": "+why).WithDetails(&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: why}},
	})
	return st.Err()
}

func (s *service) CreateShipment(ctx context.Context, r *shippingv1.CreateShipmentRequest) (*shippingv1.Shipment, error) {
	in := r.GetShipment()
	switch {
	case in == nil:
		return nil, invalid("shipment", "is required")
	case in.GetOrderId() == "":
		return nil, invalid("shipment.order_id", "is required")
	case !postalCode.MatchString(in.GetPostalCode()):
		return nil, invalid("shipment.postal_code", "must be 5 digits")
	}
	key := ""
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get(idempotencyKey)) > 0 {
		key = md.Get(idempotencyKey)[0] // a direct gRPC call may send none: not deduplicated
	}
	req, err := proto.MarshalOptions{Deterministic: true}.Marshal(r)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.keys[key]; ok && key != "" {
		return s.replay(ctx, prev, req)
	}
	if slices.ContainsFunc(s.shipments, func(x *shippingv1.Shipment) bool { return x.GetOrderId() == in.GetOrderId() }) {
		return nil, status.Errorf(codes.AlreadyExists, "order %s has a shipment already", in.GetOrderId())
	}
	sh := proto.CloneOf(in)
	sh.Id, sh.State, sh.Carrier = fmt.Sprintf("shp-%d", len(s.shipments)+1), shippingv1.Shipment_STATE_BOOKED, ""
	s.shipments = append(s.shipments, sh)
	if key != "" {
		s.keys[key] = booked{request: req, id: sh.GetId()}
	}
	return proto.CloneOf(sh), nil
}

// replay answers a create whose idempotency key was used before: the
// shipment it booked, as it is now, when the request is the same; else
// FAILED_PRECONDITION with the reason IDEMPOTENCY_KEY_REUSED, which the
// edge answers as 422.
func (s *service) replay(ctx context.Context, prev booked, req []byte) (*shippingv1.Shipment, error) {
	if !bytes.Equal(prev.request, req) {
		st, _ := status.New(codes.FailedPrecondition, "the idempotency key was used for a different request").WithDetails(
			&errdetails.ErrorInfo{Reason: "IDEMPOTENCY_KEY_REUSED", Domain: "shipping.example.com"})
		return nil, st.Err()
	}
	sh, err := s.find(prev.id, "")
	if err != nil {
		return nil, err
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs(replayedKey, "true"))
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
