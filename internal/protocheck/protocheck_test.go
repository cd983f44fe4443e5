package protocheck_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/protocheck"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// fields returns the field paths of err's BadRequest.
func fields(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("code = %v, want InvalidArgument (%v)", st.Code(), err)
	}
	var out []string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				out = append(out, v.GetField())
			}
		}
	}
	return out
}

func TestRequest(t *testing.T) {
	big := strings.Repeat("x", 500_000)
	line := func(sku string, q int32) *orderv1.OrderLine { return &orderv1.OrderLine{Sku: sku, Quantity: q} }
	tests := []struct {
		name string
		msg  proto.Message
		want []string
	}{
		{"valid order", &orderv1.CreateOrderRequest{Lines: []*orderv1.OrderLine{line("keyboard-001", 1)}, PaymentMethod: "pm_card_ok"}, nil},
		{"500 KB payment method", &orderv1.CreateOrderRequest{Lines: []*orderv1.OrderLine{line("keyboard-001", 1)}, PaymentMethod: big}, []string{"payment_method"}},
		{"missing payment method", &orderv1.CreateOrderRequest{Lines: []*orderv1.OrderLine{line("keyboard-001", 1)}}, []string{"payment_method"}},
		{"bad line", &orderv1.CreateOrderRequest{Lines: []*orderv1.OrderLine{line("ok", 1), line("BAD", 0)}, PaymentMethod: "pm_card_ok"}, []string{"lines[1].sku", "lines[1].quantity"}},
		{"no lines", &orderv1.CreateOrderRequest{PaymentMethod: "pm_card_ok"}, []string{"lines"}},
		{"long order id", &orderv1.GetOrderRequest{Id: strings.Repeat("a", 65)}, []string{"id"}},
		{"negative page size", &orderv1.ListOrdersRequest{PageSize: -1}, []string{"page_size"}},
		{"long payment method", &paymentv1.CreatePaymentRequest{OrderId: "ord-1", PaymentMethod: big}, []string{"amount", "payment_method"}},
		{"long item name", &inventoryv1.CreateItemRequest{Item: &inventoryv1.Item{Sku: "a", Name: big, UnitPrice: &typev1.Money{AmountMinor: 1, Currency: "USD"}}}, []string{"item.name"}},
		{"missing item", &inventoryv1.CreateItemRequest{}, []string{"item"}},
		{"reservation id alphabet", &inventoryv1.GetReservationRequest{Id: "res/1"}, []string{"id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fields(t, protocheck.Request(tt.msg))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Request(%s) fields (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestRulesCompile evaluates every message of Portico's protos once, so a
// rule that does not compile fails here rather than as INTERNAL in a
// service.
func TestRulesCompile(t *testing.T) {
	n := 0
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "portico.") {
			return true
		}
		msgs := fd.Messages()
		for i := range msgs.Len() {
			mt, err := protoregistry.GlobalTypes.FindMessageByName(msgs.Get(i).FullName())
			if err != nil {
				t.Fatal(err)
			}
			var v rpcerr.Violations
			if err := protocheck.Check(&v, mt.New().Interface()); err != nil {
				t.Errorf("Check(%s) = %v", mt.Descriptor().FullName(), err)
			}
			n++
		}
		return true
	})
	if n == 0 {
		t.Fatal("no portico messages registered")
	}
}
