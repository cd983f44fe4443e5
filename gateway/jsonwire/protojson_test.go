package jsonwire

import (
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// TestProtojsonRejects pins what protojson (the version in go.mod) already
// rejects on its own, so the edge need not walk a body first to find it.
func TestProtojsonRejects(t *testing.T) {
	tests := []struct {
		name string
		msg  proto.Message
		body string
	}{
		{"duplicate field", &orderv1.CreateOrderRequest{}, `{"paymentMethod":"a","paymentMethod":"b"}`},
		{"duplicate nested field", &orderv1.CreateOrderRequest{}, `{"lines":[{"sku":"a","sku":"b"}]}`},
		{"field under both names", &orderv1.CreateOrderRequest{}, `{"paymentMethod":"a","payment_method":"b"}`},
		{"duplicate map key", &errdetails.ErrorInfo{}, `{"metadata":{"k":"a","k":"b"}}`},
		{"duplicate struct key", &structpb.Struct{}, `{"k":1,"k":2}`},
		{"unknown field", &orderv1.CreateOrderRequest{}, `{"colour":"red"}`},
		{"two members of a oneof", &annotations.HttpRule{}, `{"get":"/a","post":"/b"}`},
		{"fraction", &orderv1.CreateOrderRequest{}, `{"lines":[{"quantity":1.5}]}`},
		{"int32 out of range", &orderv1.CreateOrderRequest{}, `{"lines":[{"quantity":2147483648}]}`},
		{"int64 out of range", &orderv1.Order{}, `{"total":{"amountMinor":"9223372036854775808"}}`},
		{"short enum name", &orderv1.Order{}, `{"status":"CONFIRMED"}`},
		{"trailing data", &orderv1.CreateOrderRequest{}, `{} {}`},
		{"invalid UTF-8", &orderv1.CreateOrderRequest{}, "{\"paymentMethod\":\"\xff\"}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := protojson.Unmarshal([]byte(tt.body), tt.msg); err == nil {
				t.Errorf("protojson accepts %s", tt.body)
			}
		})
	}
}
