package jsonwire

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// TestResponseBody checks that a response_body answer is written as the
// member it is cut from, whether it reaches the marshaler as a Field (the
// descriptor path, on generated or dynamic messages) or as the value a
// generated wrapper hands over: short enum names, int64 as strings.
func TestResponseBody(t *testing.T) {
	resp := &orderv1.ListOrdersResponse{Orders: []*orderv1.Order{
		{Id: "ord-1", Status: orderv1.Order_STATUS_CONFIRMED, Total: &typev1.Money{AmountMinor: 4999, Currency: "USD"}},
		{Id: "ord-2", Status: orderv1.Order_STATUS_PENDING},
	}, NextPageToken: "next"}
	order := resp.Orders[0]
	dyn := dynamicpb.NewMessage(resp.ProtoReflect().Descriptor())
	raw, err := proto.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(raw, dyn); err != nil {
		t.Fatal(err)
	}
	field := func(m proto.Message, name string) Field {
		return Field{Message: m.ProtoReflect(), Desc: m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name))}
	}
	m := NewMarshaler()
	tests := []struct {
		name   string
		whole  proto.Message
		member string
		v      any
	}{
		{"dynamic list of messages", dyn, "orders", field(dyn, "orders")},
		{"generated list as a Field", resp, "orders", field(resp, "orders")},
		{"generated wrapper's slice", resp, "orders", resp.Orders},
		{"generated wrapper's nil slice", &orderv1.ListOrdersResponse{}, "orders", []*orderv1.Order(nil)},
		{"string", resp, "nextPageToken", field(resp, "next_page_token")},
		{"enum as a Field", order, "status", field(order, "status")},
		{"generated wrapper's enum", order, "status", order.Status},
		{"int64 inside a message", order, "total", field(order, "total")},
		{"unset message", resp.Orders[1], "total", field(resp.Orders[1], "total")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole, err := m.Marshal(tt.whole)
			if err != nil {
				t.Fatal(err)
			}
			var members map[string]json.RawMessage
			if err := json.Unmarshal(whole, &members); err != nil {
				t.Fatal(err)
			}
			got, err := m.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if want := members[tt.member]; string(got) != string(want) {
				t.Errorf("Marshal = %s, want the member as the message writes it: %s", got, want)
			}
		})
	}
}
