package protoopt_test

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/portico-gateway/portico/gateway/protoopt"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

// shopEdge is what gateway/routes.go's behaviours map and the per-RPC rows
// of apidoc.Operations said before the facts moved into the protos: the
// shop's (portico.api.v1.edge) options must say the same.
var shopEdge = map[string]struct {
	summary, location string
	key               bool
	errors            []int32
}{
	"/portico.inventory.v1.InventoryService/GetItem":            {"Get a catalogue item", "", false, []int32{404}},
	"/portico.inventory.v1.InventoryService/ListItems":          {"List the catalogue", "", false, nil},
	"/portico.inventory.v1.InventoryService/CreateItem":         {"Add a catalogue item", "/api/inventory/{sku}", false, []int32{409}},
	"/portico.inventory.v1.InventoryService/UpdateItem":         {"Update a catalogue item", "", false, []int32{404}},
	"/portico.inventory.v1.InventoryService/ReserveStock":       {"Reserve stock for an order", "/api/reservations/{id}", false, []int32{404, 409, 422}},
	"/portico.inventory.v1.InventoryService/GetReservation":     {"Get a reservation", "", false, []int32{404}},
	"/portico.inventory.v1.InventoryService/CommitReservation":  {"Commit a reservation", "", false, []int32{404, 409}},
	"/portico.inventory.v1.InventoryService/ReleaseReservation": {"Release a reservation", "", false, []int32{404, 409}},
	"/portico.payment.v1.PaymentService/CreatePayment":          {"Charge an order", "/api/payments/{id}", true, []int32{409, 422}},
	"/portico.payment.v1.PaymentService/GetPayment":             {"Get a payment", "", false, []int32{404}},
	"/portico.payment.v1.PaymentService/ListPayments":           {"List an order's payments", "", false, nil},
	"/portico.payment.v1.PaymentService/RefundPayment":          {"Refund a payment", "", false, []int32{404, 409}},
	"/portico.order.v1.OrderService/CreateOrder":                {"Place an order", "/api/orders/{id}", true, []int32{404, 409, 422}},
	"/portico.order.v1.OrderService/GetOrder":                   {"Get an order", "", false, []int32{404}},
	"/portico.order.v1.OrderService/ListOrders":                 {"List orders", "", false, nil},
	"/portico.order.v1.OrderService/CancelOrder":                {"Cancel an order", "", false, []int32{404, 409}},
	"/portico.order.v1.OrderService/WatchOrder":                 {"Watch an order settle", "", false, []int32{404}},
	"/portico.order.v1.OrderService/ExportOrders":               {"Export orders", "", false, nil},
}

func TestEdgeShop(t *testing.T) {
	seen := 0
	for _, sd := range []protoreflect.ServiceDescriptor{
		inventoryv1.File_portico_inventory_v1_inventory_proto.Services().Get(0),
		paymentv1.File_portico_payment_v1_payment_proto.Services().Get(0),
		orderv1.File_portico_order_v1_order_proto.Services().Get(0),
	} {
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i)
			rpc := "/" + string(sd.FullName()) + "/" + string(md.Name())
			want, ok := shopEdge[rpc]
			if !ok {
				t.Errorf("%s: not in the old table", rpc)
				continue
			}
			seen++
			e := protoopt.Edge(md)
			if e.GetSummary() != want.summary || e.GetLocation() != want.location || e.GetIdempotencyKey() != want.key || !slices.Equal(e.GetErrors(), want.errors) {
				t.Errorf("Edge(%s) = {%q %q %v %v}, want {%q %q %v %v}", rpc,
					e.GetSummary(), e.GetLocation(), e.GetIdempotencyKey(), e.GetErrors(),
					want.summary, want.location, want.key, want.errors)
			}
		}
	}
	if seen != len(shopEdge) {
		t.Errorf("%d of the table's %d RPCs are in the shop's protos", seen, len(shopEdge))
	}
}

// TestEdgeFromDescriptorSet reads the option from a descriptor built at run
// time whose options hold it as unknown fields (as a descriptor set decoded
// without Portico's types linked would).
func TestEdgeFromDescriptorSet(t *testing.T) {
	fdp := protodesc.ToFileDescriptorProto(orderv1.File_portico_order_v1_order_proto)
	b, err := proto.Marshal(fdp)
	if err != nil {
		t.Fatal(err)
	}
	raw := &descriptorpb.FileDescriptorProto{}
	if err := (proto.UnmarshalOptions{Resolver: (*protoregistry.Types)(nil)}).Unmarshal(b, raw); err != nil {
		t.Fatal(err)
	}
	fd, err := protodesc.NewFile(raw, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	md := fd.Services().Get(0).Methods().ByName("CreateOrder")
	if len(md.Options().ProtoReflect().GetUnknown()) == 0 {
		t.Fatal("the option was decoded, want it unknown for this test")
	}
	if e := protoopt.Edge(md); e.GetLocation() != "/api/orders/{id}" || !e.GetIdempotencyKey() {
		t.Errorf("Edge(CreateOrder from a descriptor set) = %v, want location /api/orders/{id} and the key", e)
	}
}
