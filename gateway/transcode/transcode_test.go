package transcode

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/route"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// answering is a connection whose every call answers resp.
type answering struct{ resp proto.Message }

func (a answering) Invoke(_ context.Context, _ string, _, out any, _ ...grpc.CallOption) error {
	raw, err := proto.Marshal(a.resp)
	if err != nil {
		return err
	}
	return proto.Unmarshal(raw, out.(proto.Message))
}

func (answering) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	panic("no streams")
}

// TestResponseBody: a route with response_body answers that field of the
// response exactly as the whole answer writes the member (short enum
// names, 64-bit integers as strings), through the edge's marshaler.
func TestResponseBody(t *testing.T) {
	resp := &orderv1.ListOrdersResponse{Orders: []*orderv1.Order{
		{Id: "ord-1", Status: orderv1.Order_STATUS_CONFIRMED, Total: &typev1.Money{AmountMinor: 4999, Currency: "USD"}},
	}, NextPageToken: "next"}
	whole, err := jsonwire.NewMarshaler().Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(whole, &members); err != nil {
		t.Fatal(err)
	}
	routes, err := route.FromService(orderv1.File_portico_order_v1_order_proto.Services().Get(0), "order")
	if err != nil {
		t.Fatal(err)
	}
	var list *route.Route
	for _, r := range routes {
		if r.Method == http.MethodGet && r.Pattern == "/api/orders" {
			list = r
		}
	}
	for _, tt := range []struct{ field, want string }{
		{"", string(whole)},
		{"orders", string(members["orders"])},
		{"next_page_token", string(members["nextPageToken"])},
	} {
		r := *list
		r.ResponseBody = tt.field
		mux := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, jsonwire.NewMarshaler()))
		if err := Register(mux, &r, answering{resp}); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(mux)
		res, err := http.Get(srv.URL + "/api/orders")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		srv.Close()
		if res.StatusCode != 200 || string(got) != tt.want {
			t.Errorf("response_body %q: %d %s, want %s", tt.field, res.StatusCode, got, tt.want)
		}
	}
}
